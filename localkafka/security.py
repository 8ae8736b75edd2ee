"""Secured local clusters: SASL_SSL with SCRAM-SHA-512, or SSL with client certificates (mTLS), under an authorizer
that denies what no ACL allows.

Each secured cluster gets, in `<data_dir>/tls/`, a CA of its own, a broker certificate for 127.0.0.1 and localhost,
and client certificates, all made at its first start with the `cryptography` package. Two principals are made:

- `admin`, a super user: the broker's own principal is one too (it calls its controller over mTLS as `broker`);
- `replicator`, with no ACL: a test or the operator grants it what a flow needs, and nothing more.

On SCRAM clusters both are SCRAM users: `admin` is written into the metadata log when the storage is formatted
(Kafka's own `kafka-storage format --add-scram`), so the broker can authenticate to itself; `replicator` is created
with Kafka's admin API once the broker answers. On mTLS clusters a principal is its certificate's CN.

`client_properties` writes what a librdkafka client of a principal needs, by librdkafka's property names.
"""

from __future__ import annotations

import datetime
import ipaddress
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

ADMIN = "admin"
REPLICATOR = "replicator"
BROKER = "broker"
PRINCIPALS = (ADMIN, REPLICATOR)
SCRAM_MECHANISM = "SCRAM-SHA-512"
CERT_DAYS = 365
# The broker's certificate names the addresses a client may reach it by; anything else is a hostname mismatch.
BROKER_HOSTS = ("127.0.0.1", "localhost")


class Security(StrEnum):
    """How a local cluster's clients connect."""

    PLAINTEXT = "plaintext"
    SCRAM = "scram"  # SASL_SSL with SCRAM-SHA-512
    MTLS = "mtls"  # SSL with client certificates

    @property
    def listener(self) -> str:
        return {"plaintext": "PLAINTEXT", "scram": "SASL_SSL", "mtls": "SSL"}[self.value]


@dataclass(frozen=True)
class Material:
    """Where one secured cluster's keys, certificates and passwords live."""

    directory: Path

    @property
    def ca(self) -> Path:
        return self.directory / "ca.pem"

    @property
    def broker_keystore(self) -> Path:
        """The broker's key and certificate chain in one PEM file (Kafka's `ssl.keystore.type=PEM`)."""
        return self.directory / "broker.pem"

    def certificate(self, principal: str) -> Path:
        return self.directory / f"{principal}.crt"

    def key(self, principal: str) -> Path:
        return self.directory / f"{principal}.key"

    def password_file(self, principal: str) -> Path:
        return self.directory / f"{principal}.password"

    def password(self, principal: str) -> str:
        return self.password_file(principal).read_text().strip()

    def exists(self) -> bool:
        return self.ca.exists() and self.broker_keystore.exists() and self.password_file(REPLICATOR).exists()


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    # Unencrypted PKCS#8: what both Kafka's PEM keystore and librdkafka read without a password.
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def certificate_pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def issue(
    ca_key: ec.EllipticCurvePrivateKey,
    ca_cert: x509.Certificate,
    common_name: str,
    hosts: tuple[str, ...] = (),
    not_before: datetime.datetime | None = None,
    days: int = CERT_DAYS,
) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    """A key and a certificate signed by the CA, for a server (with hosts) or a client (without)."""
    key = _key()
    start = not_before or datetime.datetime.now(datetime.UTC) - datetime.timedelta(minutes=5)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(start + datetime.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
    )
    usages = [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH] if hosts else []
    usages = usages or [ExtendedKeyUsageOID.CLIENT_AUTH]
    builder = builder.add_extension(x509.ExtendedKeyUsage(usages), critical=False)
    if hosts:
        names: list[x509.GeneralName] = []
        for host in hosts:
            try:
                names.append(x509.IPAddress(ipaddress.ip_address(host)))
            except ValueError:
                names.append(x509.DNSName(host))
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    return key, builder.sign(ca_key, hashes.SHA256())


def new_ca(common_name: str) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = _key()
    now = datetime.datetime.now(datetime.UTC) - datetime.timedelta(minutes=5)
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(_name(common_name))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=CERT_DAYS))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
        )  # keyCertSign, cRLSign
        .sign(key, hashes.SHA256())
    )
    return key, cert


def make_material(directory: Path, alias: str) -> Material:
    """The CA, the broker's keystore, and a certificate, key and password for each principal (kept when present)."""
    material = Material(directory)
    if material.exists():
        return material
    directory.mkdir(parents=True, exist_ok=True)
    directory.chmod(0o700)
    ca_key, ca_cert = new_ca(f"mirrorplane local CA {alias}")
    material.ca.write_bytes(certificate_pem(ca_cert))
    (directory / "ca.key").write_bytes(key_pem(ca_key))
    broker_key, broker_cert = issue(ca_key, ca_cert, BROKER, BROKER_HOSTS)
    material.broker_keystore.write_bytes(key_pem(broker_key) + certificate_pem(broker_cert) + certificate_pem(ca_cert))
    for principal in PRINCIPALS:
        key, cert = issue(ca_key, ca_cert, principal)
        material.key(principal).write_bytes(key_pem(key))
        material.certificate(principal).write_bytes(certificate_pem(cert))
        material.password_file(principal).write_text(secrets.token_urlsafe(18) + "\n")
    for path in directory.iterdir():
        path.chmod(0o600)
    return material


def ca_signed(material: Material) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    """The cluster's CA key and certificate, to issue more certificates (e.g. an expired one for a test)."""
    key = serialization.load_pem_private_key((material.directory / "ca.key").read_bytes(), password=None)
    assert isinstance(key, ec.EllipticCurvePrivateKey)
    return key, x509.load_pem_x509_certificate(material.ca.read_bytes())


def broker_settings(security: Security, material: Material, broker_port: int, control_port: int) -> dict[str, str]:
    """server.properties of a secured KRaft node: the clients' listener, and a controller listener on mTLS where the
    broker's own certificate (CN=broker, a super user) is its principal."""
    listener = security.listener
    settings = {
        "listeners": f"{listener}://127.0.0.1:{broker_port},CONTROLLER://127.0.0.1:{control_port}",
        "advertised.listeners": f"{listener}://127.0.0.1:{broker_port}",
        "listener.security.protocol.map": f"{listener}:{listener},CONTROLLER:SSL",
        "inter.broker.listener.name": listener,
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(material.broker_keystore),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(material.ca),
        "listener.name.controller.ssl.client.auth": "required",
        # A certificate's principal is its CN: User:broker, User:admin, User:replicator.
        "ssl.principal.mapping.rules": "RULE:^CN=([^,]+)$/$1/,DEFAULT",
        "super.users": f"User:{ADMIN};User:{BROKER}",
        "allow.everyone.if.no.acl.found": "false",
    }
    if security is Security.SCRAM:
        jaas = (
            "org.apache.kafka.common.security.scram.ScramLoginModule required "
            f'username="{ADMIN}" password="{material.password(ADMIN)}";'
        )
        settings |= {
            "sasl.enabled.mechanisms": SCRAM_MECHANISM,
            "sasl.mechanism.inter.broker.protocol": SCRAM_MECHANISM,
            f"listener.name.sasl_ssl.{SCRAM_MECHANISM.lower()}.sasl.jaas.config": jaas,
        }
    else:
        settings["ssl.client.auth"] = "required"
    return settings


def format_arguments(security: Security, material: Material) -> list[str]:
    """`kafka-storage format` arguments that write the admin's SCRAM credential into the metadata log."""
    if security is not Security.SCRAM:
        return []
    return ["--add-scram", f"{SCRAM_MECHANISM}=[name={ADMIN},password={material.password(ADMIN)}]"]


def client_config(security: Security, material: Material, bootstrap: str, principal: str) -> dict[str, str]:
    """librdkafka settings of a client that connects to the cluster as principal."""
    config = {"bootstrap.servers": bootstrap, "security.protocol": security.listener}
    if security is Security.PLAINTEXT:
        return config
    config["ssl.ca.location"] = str(material.ca)
    if security is Security.SCRAM:
        config |= {
            "sasl.mechanism": SCRAM_MECHANISM,
            "sasl.username": principal,
            "sasl.password": material.password(principal),
        }
    else:
        config |= {
            "ssl.certificate.location": str(material.certificate(principal)),
            "ssl.key.location": str(material.key(principal)),
        }
    return config


def write_client_properties(path: Path, config: Mapping[str, str]) -> Path:
    """A client properties file (librdkafka's names), readable by its owner only: it holds a secret."""
    path.write_text("".join(f"{key}={value}\n" for key, value in config.items()))
    path.chmod(0o600)
    return path
