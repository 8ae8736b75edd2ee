"""Why a client cannot use a cluster, in words an operator can act on.

librdkafka reports a failed connection by what the TLS or SASL layer saw ("certificate verify failed", "SSL alert
number 46", "invalid credentials"). One message covers several causes: a broker certificate from another CA and one
for another host name both read "certificate verify failed". `explain` names the cause, looking at the client's own
certificate, and at the broker's certificate (fetched without verifying it) when the broker's was refused. The
original message follows the cause.
"""

from __future__ import annotations

import datetime
import ipaddress
import socket
import ssl
import time
from collections.abc import Mapping
from pathlib import Path

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa

from replication.clientlog import logged
from replication.config import ClusterConfig

PROBE_SECONDS = 5.0
_ATTEMPT_SECONDS = 0.5
# TLS alerts a broker sends about the client's certificate (RFC 8446, 6.2).
_CLIENT_CERTIFICATE_ALERTS = {
    "alert bad certificate": "refused the client certificate",
    "alert certificate unknown": "refused the client certificate",
    "alert certificate expired": "refused the client certificate as expired",
    "alert unknown ca": "does not trust the CA of the client certificate",
    "alert certificate required": "asks for a client certificate (mTLS)",
}


def explain(message: str, client: Mapping[str, str]) -> str:
    """librdkafka's error message, preceded by its cause when one can be named."""
    cause = _cause(message, client)
    return f"{cause}: {message}" if cause else message


def probe(cluster: ClusterConfig, timeout: float = PROBE_SECONDS) -> str | None:
    """None when an admin call answers within timeout; otherwise why not (`explain`)."""
    errors: list[KafkaError] = []
    config = {**cluster.client, "error_cb": errors.append, "log_level": 0}
    try:
        admin = AdminClient(logged(config))
    except (KafkaException, TypeError, ValueError) as exc:
        return str(exc.args[0].str() if isinstance(exc, KafkaException) else exc)
    deadline = time.monotonic() + timeout
    while True:
        try:
            admin.list_topics(timeout=min(_ATTEMPT_SECONDS, max(0.01, deadline - time.monotonic())))
            return None
        except KafkaException as exc:
            admin.poll(0)
            connection = next((e.str() for e in errors if e.code() != KafkaError._ALL_BROKERS_DOWN), None)
            down = any(e.code() == KafkaError._ALL_BROKERS_DOWN for e in errors)
            if time.monotonic() >= deadline or (down and connection):
                return explain(connection or exc.args[0].str(), cluster.client)


def _cause(message: str, client: Mapping[str, str]) -> str | None:
    text = message.lower()
    if "sasl authentication error" in text and "invalid credentials" in text:
        return "the broker refused the SASL credentials: a wrong password or an unknown user (Kafka does not say which)"
    if "certificate verify failed" in text:
        return _server_certificate_cause(client)
    for alert, refusal in _CLIENT_CERTIFICATE_ALERTS.items():
        if alert in text:
            return f"the broker {refusal}{_client_certificate_state(client)}"
    return None


def _client_certificate_state(client: Mapping[str, str]) -> str:
    pem = _pem(client, "ssl.certificate.pem", "ssl.certificate.location")
    if pem is None:
        return ", and none is set (ssl.certificate.pem)"
    try:
        certificate = x509.load_pem_x509_certificates(pem)[0]
    except ValueError:
        return ""
    return _validity(certificate, "the client certificate")


def _validity(certificate: x509.Certificate, what: str) -> str:
    now = datetime.datetime.now(datetime.UTC)
    if certificate.not_valid_after_utc < now:
        return f": {what} expired on {certificate.not_valid_after_utc:%Y-%m-%d %H:%M} UTC"
    if certificate.not_valid_before_utc > now:
        return f": {what} is valid only from {certificate.not_valid_before_utc:%Y-%m-%d %H:%M} UTC"
    return ""


def _server_certificate_cause(client: Mapping[str, str]) -> str:
    host, _, port = client.get("bootstrap.servers", "").split(",")[0].strip().rpartition(":")
    try:
        certificate = _broker_certificate(host, int(port))
    except (OSError, ValueError):
        return "the broker's certificate could not be verified"
    expired = _validity(certificate, "the broker's certificate")
    if expired:
        return expired.removeprefix(": ")
    if not _names(certificate, host):
        return f"the broker's certificate does not name {host} (a host name mismatch): it names {_named(certificate)}"
    ca = _pem(client, "ssl.ca.pem", "ssl.ca.location")
    if ca is not None and not _signed_by_any(certificate, x509.load_pem_x509_certificates(ca)):
        return "the broker's certificate is not signed by the CA in ssl.ca.pem"
    return "the broker's certificate could not be verified"


def _broker_certificate(host: str, port: int) -> x509.Certificate:
    """The certificate the broker presents, fetched without verifying it (to say why verification failed)."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    with (
        socket.create_connection((host, port), timeout=PROBE_SECONDS) as sock,
        context.wrap_socket(sock, server_hostname=host) as tls,
    ):
        der = tls.getpeercert(binary_form=True)
    if der is None:
        raise ValueError("no certificate")
    return x509.load_der_x509_certificate(der)


def _alternative_names(certificate: x509.Certificate) -> x509.SubjectAlternativeName | None:
    try:
        return certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return None


def _names(certificate: x509.Certificate, host: str) -> bool:
    names = _alternative_names(certificate)
    if names is None:
        return False
    try:
        return ipaddress.ip_address(host) in names.get_values_for_type(x509.IPAddress)
    except ValueError:
        dns = [name.lower() for name in names.get_values_for_type(x509.DNSName)]
        return host.lower() in dns or any(n.startswith("*.") and host.lower().endswith(n[1:]) for n in dns)


def _named(certificate: x509.Certificate) -> str:
    names = _alternative_names(certificate)
    if names is None:
        return "no host"
    values = [str(v) for v in names.get_values_for_type(x509.IPAddress)] + names.get_values_for_type(x509.DNSName)
    return ", ".join(values) or "no host"


def _signed_by_any(certificate: x509.Certificate, cas: list[x509.Certificate]) -> bool:
    for ca in cas:
        key = ca.public_key()
        signature_hash = certificate.signature_hash_algorithm
        try:
            if isinstance(key, ec.EllipticCurvePublicKey) and signature_hash is not None:
                key.verify(certificate.signature, certificate.tbs_certificate_bytes, ec.ECDSA(signature_hash))
            elif isinstance(key, rsa.RSAPublicKey) and signature_hash is not None:
                key.verify(certificate.signature, certificate.tbs_certificate_bytes, padding.PKCS1v15(), signature_hash)
            else:
                continue
            return True
        except Exception:  # InvalidSignature: not this CA
            continue
    return False


def _pem(client: Mapping[str, str], inline: str, location: str) -> bytes | None:
    if client.get(inline):
        return client[inline].encode()
    if client.get(location):
        try:
            return Path(client[location]).read_bytes()
        except OSError:
            return None
    return None
