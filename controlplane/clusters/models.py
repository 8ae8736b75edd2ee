"""A Kafka cluster the control plane replicates from or to."""

from __future__ import annotations

from django.db import models

from controlplane.clusters import crypto
from controlplane.clusters.choices import SaslMechanism, SecurityProtocol
from controlplane.clusters.validators import validate_bootstrap_servers, validate_cluster_alias


class Cluster(models.Model):
    """A Kafka cluster known by its alias, the prefix of the remote topics replicated from it.

    The SASL password is stored only as a Fernet token; ``sasl_password`` decrypts it on demand.
    """

    alias = models.CharField(max_length=64, unique=True, validators=[validate_cluster_alias])
    bootstrap_servers = models.CharField(max_length=1024, validators=[validate_bootstrap_servers])
    security_protocol = models.CharField(
        max_length=16, choices=SecurityProtocol.choices, default=SecurityProtocol.PLAINTEXT
    )
    sasl_mechanism = models.CharField(max_length=16, choices=SaslMechanism.choices, blank=True, default="")
    sasl_username = models.CharField(max_length=255, blank=True, default="")
    sasl_password_encrypted = models.TextField(blank=True, default="", editable=False)
    ssl_ca_pem = models.TextField(blank=True, default="", help_text="CA certificate(s) in PEM, if not the system's")
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
