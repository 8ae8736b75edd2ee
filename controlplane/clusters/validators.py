"""Field validators that apply replication/'s own rules to cluster fields."""

from __future__ import annotations

import re

from cryptography import x509
from django.core.exceptions import ValidationError

from replication.mm2.policy import PolicyError, validate_alias


def validate_cluster_alias(alias: str) -> None:
    """An alias must be usable as a remote-topic prefix. The separator is a flow property, so a flow checks
    that its clusters' aliases do not contain its separator (replication.config.validate_flow)."""
    try:
        validate_alias(alias, separator="")
    except PolicyError as exc:
        raise ValidationError(str(exc).split(": ", 1)[-1]) from None


# ASCII digits only: str.isdigit() also accepts "١٢٣", which librdkafka cannot use.
_PORT = re.compile(r"[0-9]{1,5}")


def validate_bootstrap_servers(value: str) -> None:
    """A comma-separated list of host:port, as librdkafka's bootstrap.servers takes it."""
    servers = [server.strip() for server in value.split(",")]
    for server in servers:
        host, sep, port = server.rpartition(":")
        valid_port = _PORT.fullmatch(port) is not None and 0 < int(port) < 65536
        if not sep or not host or not valid_port or any(c.isspace() for c in host):
            raise ValidationError(f"{server!r} is not host:port (expected e.g. kafka1:9092,kafka2:9092)")


def validate_ca_pem(value: str) -> None:
    """One or more X.509 certificates in PEM, as librdkafka's ssl.ca.pem takes them (empty: the system's CAs)."""
    if not value:
        return
    try:
        x509.load_pem_x509_certificates(value.encode())
    except ValueError:
        raise ValidationError("is not a PEM-encoded X.509 certificate") from None
