"""A secured cluster that refuses a client says why, within seconds, on real brokers: in the standalone runner's log,
in the control plane's cluster check, and from `probe` (what provisioning asks first)."""

from __future__ import annotations

import datetime
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from controlplane.clusters.models import Cluster
from controlplane.clusters.services import connectivity_check
from localkafka import LocalKafka
from localkafka.security import REPLICATOR, ca_signed, certificate_pem, issue, key_pem, new_ca
from replication.config import ClusterConfig
from replication.kafka.diagnosis import probe

pytestmark = pytest.mark.kafka
REPO = Path(__file__).resolve().parents[2]
NAMED_WITHIN_SECONDS = 15
CREDENTIALS = "the broker refused the SASL credentials: a wrong password or an unknown user"


def _probe(config: dict[str, str]) -> str:
    started = time.monotonic()
    reason = probe(ClusterConfig("sec", config))
    assert time.monotonic() - started < NAMED_WITHIN_SECONDS
    assert reason is not None
    return reason


def test_a_wrong_password_and_an_unknown_user_are_named(secured_kafka: LocalKafka) -> None:
    config = secured_kafka.client_config("sec-scram", REPLICATOR)
    assert _probe({**config, "sasl.password": "not-it"}).startswith(CREDENTIALS)
    assert _probe({**config, "sasl.username": "nobody"}).startswith(CREDENTIALS)
    assert probe(ClusterConfig("sec", config)) is None


def test_a_broker_certificate_from_another_ca_is_named(secured_kafka: LocalKafka, tmp_path: Path) -> None:
    _, foreign = new_ca("another CA")
    (tmp_path / "ca.pem").write_bytes(certificate_pem(foreign))
    config = {**secured_kafka.client_config("sec-mtls", REPLICATOR), "ssl.ca.location": str(tmp_path / "ca.pem")}
    assert _probe(config).startswith("the broker's certificate is not signed by the CA in ssl.ca.pem: ")


def test_an_expired_client_certificate_is_named_with_its_date(secured_kafka: LocalKafka, tmp_path: Path) -> None:
    ca_key, ca_cert = ca_signed(secured_kafka.cluster("sec-mtls").spec.material)
    start = datetime.datetime.now(datetime.UTC) - datetime.timedelta(days=30)
    key, cert = issue(ca_key, ca_cert, REPLICATOR, not_before=start, days=1)
    (tmp_path / "c.pem").write_bytes(certificate_pem(cert))
    (tmp_path / "k.pem").write_bytes(key_pem(key))
    config = secured_kafka.client_config("sec-mtls", REPLICATOR)
    config |= {"ssl.certificate.location": str(tmp_path / "c.pem"), "ssl.key.location": str(tmp_path / "k.pem")}
    expiry = f"{cert.not_valid_after_utc:%Y-%m-%d %H:%M} UTC"
    assert _probe(config).startswith(
        f"the broker refused the client certificate: the client certificate expired on {expiry}"
    )


def test_a_client_certificate_from_an_untrusted_ca_and_none_at_all_are_named(
    secured_kafka: LocalKafka, tmp_path: Path
) -> None:
    foreign_key, foreign = new_ca("another CA")
    key, cert = issue(foreign_key, foreign, REPLICATOR)
    (tmp_path / "c.pem").write_bytes(certificate_pem(cert))
    (tmp_path / "k.pem").write_bytes(key_pem(key))
    config = secured_kafka.client_config("sec-mtls", REPLICATOR)
    untrusted = {
        **config,
        "ssl.certificate.location": str(tmp_path / "c.pem"),
        "ssl.key.location": str(tmp_path / "k.pem"),
    }
    assert _probe(untrusted).startswith("the broker refused the client certificate: ")
    del config["ssl.certificate.location"], config["ssl.key.location"]
    assert ", and none is set (ssl.certificate.pem)" in _probe(config)


@pytest.fixture
def tls_server_for_another_host(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """A TLS endpoint whose certificate, from a CA the client trusts, names another host than 127.0.0.1."""
    ca_key, ca_cert = new_ca("test CA")
    key, cert = issue(ca_key, ca_cert, "broker", ("kafka.elsewhere.example",))
    (tmp_path / "server.pem").write_bytes(key_pem(key) + certificate_pem(cert))
    (tmp_path / "ca.pem").write_bytes(certificate_pem(ca_cert))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "server.pem")
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            try:
                with context.wrap_socket(conn, server_side=True) as tls:
                    tls.recv(1)
            except (OSError, ssl.SSLError):
                pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield listener.getsockname()[1], tmp_path / "ca.pem"
    stop.set()
    thread.join(5)
    listener.close()


def test_a_host_name_mismatch_is_named(tls_server_for_another_host: tuple[int, Path]) -> None:
    port, ca = tls_server_for_another_host
    config = {"bootstrap.servers": f"127.0.0.1:{port}", "security.protocol": "SSL", "ssl.ca.location": str(ca)}
    assert _probe(config).startswith(
        "the broker's certificate does not name 127.0.0.1 (a host name mismatch): it names kafka.elsewhere.example: "
    )


@pytest.mark.django_db
def test_the_cluster_check_names_a_wrong_password(secured_kafka: LocalKafka) -> None:
    config = secured_kafka.client_config("sec-scram", REPLICATOR)
    cluster = Cluster(
        alias="vault",
        bootstrap_servers=config["bootstrap.servers"],
        security_protocol="SASL_SSL",
        sasl_mechanism="SCRAM-SHA-512",
        sasl_username=REPLICATOR,
        ssl_ca_pem=Path(config["ssl.ca.location"]).read_text(),
    )
    cluster.sasl_password = "not-the-password"
    started = time.monotonic()
    check = connectivity_check(cluster)
    assert time.monotonic() - started < NAMED_WITHIN_SECONDS
    assert check["ok"] is False and check["error"].startswith(CREDENTIALS)
    assert "not-the-password" not in check["error"]


def test_the_standalone_runner_names_a_wrong_password_and_stops(secured_kafka: LocalKafka, tmp_path: Path) -> None:
    lines = ["clusters = sec-scram, sec-mtls"]
    for alias in ("sec-scram", "sec-mtls"):
        lines += [f"{alias}.{k} = {v}" for k, v in secured_kafka.client_config(alias, REPLICATOR).items()]
    lines += ["sec-scram.sasl.password = not-the-password", "sec-scram->sec-mtls.enabled = true"]
    (tmp_path / "mm2.properties").write_text("\n".join(lines) + "\n")
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "replication", "run", "--config", str(tmp_path / "mm2.properties")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert time.monotonic() - started < NAMED_WITHIN_SECONDS + 5  # the interpreter's own start included
    assert done.returncode == 2
    errors = [line for line in done.stderr.splitlines() if " ERROR " in line]
    assert len(errors) == 1 and f"cannot use sec-scram: {CREDENTIALS}" in errors[0], done.stderr
    assert "not-the-password" not in done.stderr
