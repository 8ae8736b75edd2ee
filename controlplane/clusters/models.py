"""A Kafka cluster the control plane replicates from or to."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db import models

from controlplane.clusters import crypto
from controlplane.clusters.choices import SaslMechanism, SecurityProtocol
from controlplane.clusters.validators import (
    validate_bootstrap_servers,
    validate_ca_pem,
    validate_certificate_pem,
    validate_cluster_alias,
)

# Where and how the credentials (the SASL password, the client certificate's key) are used: with these brokers, over
# this protocol, by this mechanism, with a server this CA vouches for. Changing any of them without re-entering a
# credential would hand the stored one to a host (or over a channel) it was never entered for, so the change clears
# it.
CREDENTIAL_ROUTE_FIELDS = ("bootstrap_servers", "security_protocol", "sasl_mechanism", "ssl_ca_pem")
# The write-only credentials, each stored only as a Fernet token in `<name>_encrypted`.
SECRET_FIELDS = ("sasl_password", "ssl_key_pem")


class Cluster(models.Model):
    """A Kafka cluster known by its alias, the prefix of the remote topics replicated from it.

    The SASL password and the client certificate's private key are stored only as Fernet tokens;
    ``sasl_password`` and ``ssl_key_pem`` decrypt them on demand.
    """

    alias = models.CharField(max_length=64, unique=True, validators=[validate_cluster_alias])
    bootstrap_servers = models.CharField(max_length=1024, validators=[validate_bootstrap_servers])
    security_protocol = models.CharField(
        max_length=16, choices=SecurityProtocol.choices, default=SecurityProtocol.PLAINTEXT
    )
    sasl_mechanism = models.CharField(max_length=16, choices=SaslMechanism.choices, blank=True, default="")
    sasl_username = models.CharField(max_length=255, blank=True, default="")
    sasl_password_encrypted = models.TextField(blank=True, default="", editable=False)
    ssl_ca_pem = models.TextField(
        blank=True, default="", validators=[validate_ca_pem], help_text="CA certificate(s) in PEM, if not the system's"
    )
    ssl_certificate_pem = models.TextField(
        blank=True,
        default="",
        validators=[validate_certificate_pem],
        help_text="The client's certificate (chain) in PEM, for brokers that ask for one (mTLS)",
    )
    ssl_key_pem_encrypted = models.TextField(blank=True, default="", editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["alias"]

    def __str__(self) -> str:
        return self.alias

    @property
    def sasl_password(self) -> str:
        return crypto.decrypt(self.sasl_password_encrypted)

    @sasl_password.setter
    def sasl_password(self, secret: str) -> None:
        self.sasl_password_encrypted = crypto.encrypt(secret)

    @property
    def has_sasl_password(self) -> bool:
        return bool(self.sasl_password_encrypted)

    @property
    def ssl_key_pem(self) -> str:
        return crypto.decrypt(self.ssl_key_pem_encrypted)

    @ssl_key_pem.setter
    def ssl_key_pem(self, secret: str) -> None:
        self.ssl_key_pem_encrypted = crypto.encrypt(secret)

    @property
    def has_ssl_key(self) -> bool:
        return bool(self.ssl_key_pem_encrypted)

    def route_changes(self, values: Mapping[str, Any]) -> list[str]:
        """The fields of CREDENTIAL_ROUTE_FIELDS that ``values`` would change, in that order."""
        return [name for name in CREDENTIAL_ROUTE_FIELDS if name in values and values[name] != getattr(self, name)]

    def apply(self, values: Mapping[str, Any]) -> list[str]:
        """Set ``values`` (``sasl_password`` or ``ssl_key_pem`` among them if re-entered), without saving.

        The one rule for every path that edits a stored cluster: a change to where or how credentials are sent
        clears each stored credential that ``values`` do not re-enter. Returns the route fields that cleared one
        (empty when nothing was cleared).
        """
        values = dict(values)
        secrets = {name: values.pop(name) for name in SECRET_FIELDS if name in values}
        changed = self.route_changes(values) if self.pk is not None else []
        for name, value in values.items():
            setattr(self, name, value)
        cleared = False
        for name in SECRET_FIELDS:
            if name in secrets:
                setattr(self, name, secrets[name])
            elif changed and getattr(self, f"{name}_encrypted"):
                setattr(self, name, "")
                cleared = True
        return changed if cleared else []
