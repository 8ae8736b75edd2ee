"""Cluster API representation. The SASL password and the client certificate's key are write-only; responses say only
whether one is set.

Saving goes through ``Cluster.apply``, so an edit that re-targets the credentials clears the stored password.
"""

from __future__ import annotations

from typing import Any

from django.db import models
from rest_framework import serializers

from controlplane.clusters.choices import SASL_PROTOCOLS, SSL_PROTOCOLS
from controlplane.clusters.models import Cluster
from controlplane.clusters.validators import (
    key_matches_certificate,
    validate_ca_pem,
    validate_certificate_pem,
    validate_key_pem,
)
from controlplane.core.serializers import StrictInput

MAX_PEM_LENGTH = 65536
MAX_SECRET_LENGTH = 1024


class ClusterSerializer(StrictInput, serializers.ModelSerializer[Cluster]):
    sasl_password = serializers.CharField(
        write_only=True,
        required=False,
        allow_blank=True,
        max_length=MAX_SECRET_LENGTH,
        trim_whitespace=False,
        style={"input_type": "password"},
        help_text="Write-only. Omit on update to keep the stored password; it is cleared anyway when the update "
        "changes bootstrap_servers, security_protocol, sasl_mechanism or ssl_ca_pem without re-entering it.",
    )
    has_sasl_password = serializers.BooleanField(read_only=True)
    ssl_ca_pem = serializers.CharField(
        required=False, allow_blank=True, max_length=MAX_PEM_LENGTH, validators=[validate_ca_pem]
    )
    ssl_certificate_pem = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=MAX_PEM_LENGTH,
        validators=[validate_certificate_pem],
        help_text="The client's certificate (chain) in PEM, for brokers that ask for one (mTLS); with ssl_key_pem.",
    )
    ssl_key_pem = serializers.CharField(
        write_only=True,
        required=False,
        allow_blank=True,
        max_length=MAX_PEM_LENGTH,
        trim_whitespace=False,
        validators=[validate_key_pem],
        style={"input_type": "password"},
        help_text="Write-only: the unencrypted private key of ssl_certificate_pem, in PEM. Omit on update to keep "
        "the stored one; it is cleared like the SASL password when the update changes where credentials go.",
    )
    has_ssl_key = serializers.BooleanField(read_only=True)
    # The route fields whose change cleared the stored password in the last update() (for the audit record).
    credentials_cleared_by: tuple[str, ...] = ()

    class Meta:
        model = Cluster
        fields = [
            "id",
            "alias",
            "bootstrap_servers",
            "security_protocol",
            "sasl_mechanism",
            "sasl_username",
            "sasl_password",
            "has_sasl_password",
            "ssl_ca_pem",
            "ssl_certificate_pem",
            "ssl_key_pem",
            "has_ssl_key",
            "created_at",
            "updated_at",
        ]

    def validate_alias(self, alias: str) -> str:
        # The alias is the prefix of every remote topic replicated from this cluster: renaming it would orphan them.
        if self.instance is not None and alias != self.instance.alias and _has_flows(self.instance):
            raise serializers.ValidationError("cannot be changed while flows use this cluster")
        return alias

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        protocol = self._value(attrs, "security_protocol")
        if protocol in SASL_PROTOCOLS:
            self._require_sasl(attrs)
        else:
            for name in ("sasl_mechanism", "sasl_username", "sasl_password"):
                if attrs.get(name):
                    raise serializers.ValidationError(
                        {name: f"only used with SASL_PLAINTEXT or SASL_SSL, not {protocol}"}
                    )
            attrs.update(sasl_mechanism="", sasl_username="", sasl_password="")
        for name in ("ssl_ca_pem", "ssl_certificate_pem", "ssl_key_pem"):
            if attrs.get(name) and protocol not in SSL_PROTOCOLS:
                raise serializers.ValidationError({name: f"only used with SSL or SASL_SSL, not {protocol}"})
        if protocol in SSL_PROTOCOLS:
            self._check_client_certificate(attrs)
        else:
            attrs.update(ssl_certificate_pem="", ssl_key_pem="")
        return attrs

    def _check_client_certificate(self, attrs: dict[str, Any]) -> None:
        """A certificate needs its key, given or stored (and a key its certificate); a given key must be the
        certificate's. A certificate that changes needs its key again."""
        certificate = self._value(attrs, "ssl_certificate_pem")
        key = attrs.get("ssl_key_pem")
        certificate_changed = "ssl_certificate_pem" in attrs and (
            self.instance is None or attrs["ssl_certificate_pem"] != self.instance.ssl_certificate_pem
        )
        stored_key = self.instance is not None and self.instance.has_ssl_key and not certificate_changed
        if certificate and not key and not (stored_key and "ssl_key_pem" not in attrs):
            raise serializers.ValidationError({"ssl_key_pem": "required with ssl_certificate_pem"})
        if key and not certificate:
            raise serializers.ValidationError({"ssl_certificate_pem": "required with ssl_key_pem"})
        if key and not key_matches_certificate(key, certificate):
            raise serializers.ValidationError({"ssl_key_pem": "is not the private key of ssl_certificate_pem"})
        if not certificate:
            attrs["ssl_key_pem"] = ""

    def create(self, validated_data: dict[str, Any]) -> Cluster:
        cluster = Cluster()
        cluster.apply(validated_data)
        cluster.save()
        return cluster

    def update(self, instance: Cluster, validated_data: dict[str, Any]) -> Cluster:
        self.credentials_cleared_by = tuple(instance.apply(validated_data))
        instance.save()
        return instance

    def _value(self, attrs: dict[str, Any], name: str) -> Any:
        if name in attrs:
            return attrs[name]
        if self.instance is not None:
            return getattr(self.instance, name)
        field = Cluster._meta.get_field(name)
        assert isinstance(field, models.Field)  # the names asked for are columns of the cluster
        return field.default

    def _require_sasl(self, attrs: dict[str, Any]) -> None:
        for name in ("sasl_mechanism", "sasl_username"):
            if not self._value(attrs, name):
                raise serializers.ValidationError({name: "required with SASL_PLAINTEXT and SASL_SSL"})
        # Omitted on update: the stored password is kept, or cleared by Cluster.apply if the update re-targets it.
        stored = self.instance is not None and self.instance.has_sasl_password
        if not attrs.get("sasl_password") and not (stored and "sasl_password" not in attrs):
            raise serializers.ValidationError({"sasl_password": "required with SASL_PLAINTEXT and SASL_SSL"})


def _has_flows(cluster: Cluster) -> bool:
    return cluster.outgoing_flows.exists() or cluster.incoming_flows.exists()
