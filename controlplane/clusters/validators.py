"""Field validators that apply replication/'s own rules to cluster fields."""

from __future__ import annotations

from cryptography import x509
from django.core.exceptions import ValidationError

from replication.mm2 import hosts
from replication.mm2.policy import PolicyError, validate_alias


def validate_cluster_alias(alias: str) -> None:
    """An alias must be usable as a remote-topic prefix. The separator is a flow property, so a flow checks
    that its clusters' aliases do not contain its separator (replication.config.validate_flow)."""
    try:
        validate_alias(alias, separator="")
    except PolicyError as exc:
        raise ValidationError(str(exc).split(": ", 1)[-1]) from None


def validate_bootstrap_servers(value: str) -> None:
    """A comma-separated list of host:port, as librdkafka's bootstrap.servers takes it, each host an RFC 1123
    name or an IP address (replication.mm2.hosts, the rule the MM2 properties file also keeps)."""
    try:
        hosts.validate_bootstrap_servers(value)
    except hosts.HostError as exc:
        raise ValidationError(str(exc)) from None


def validate_ca_pem(value: str) -> None:
    """One or more X.509 certificates in PEM, as librdkafka's ssl.ca.pem takes them (empty: the system's CAs)."""
    if not value:
        return
    try:
        x509.load_pem_x509_certificates(value.encode())
    except ValueError:
        raise ValidationError("is not a PEM-encoded X.509 certificate") from None
