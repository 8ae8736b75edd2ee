"""Field validators that apply replication/'s own rules to cluster fields."""

from __future__ import annotations

from cryptography import x509
from cryptography.hazmat.primitives import serialization
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


def validate_certificate_pem(value: str) -> None:
    """A client certificate (with its chain, if any) in PEM, as librdkafka's ssl.certificate.pem takes it."""
    validate_ca_pem(value)


def validate_key_pem(value: str) -> None:
    """An unencrypted private key in PEM (PKCS#8 or traditional), as librdkafka's ssl.key.pem takes it."""
    if not value:
        return
    try:
        serialization.load_pem_private_key(value.encode(), password=None)
    except (ValueError, TypeError):
        raise ValidationError("is not an unencrypted PEM private key") from None


def key_matches_certificate(key_pem: str, certificate_pem: str) -> bool:
    """Whether the private key is the one of the first certificate (the client's own) in certificate_pem."""
    key = serialization.load_pem_private_key(key_pem.encode(), password=None)
    certificate = x509.load_pem_x509_certificates(certificate_pem.encode())[0]
    public = serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    return bool(key.public_key().public_bytes(*public) == certificate.public_key().public_bytes(*public))
