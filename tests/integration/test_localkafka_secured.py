"""Secured local clusters on real brokers: SASL_SSL with SCRAM-SHA-512 and mTLS, each under an authorizer that denies
what no ACL allows, with the client properties files `up` writes."""

from __future__ import annotations

import stat
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)

from localkafka import LocalKafka
from localkafka.cluster import port_open
from localkafka.security import ADMIN, REPLICATOR, Security
from tests.support.kafka import admin as kafka_admin

pytestmark = pytest.mark.kafka
ALIASES = ("sec-scram", "sec-mtls")


def _produce(config: dict[str, str], topic: str) -> KafkaError | None:
    """The delivery error of one record produced as config's principal (None when the broker took it)."""
    errors: list[KafkaError | None] = []
    producer = Producer({**config, "message.timeout.ms": 10000})
    producer.produce(topic, b"value", on_delivery=lambda err, _msg: errors.append(err))
    producer.flush(20)
    assert len(errors) == 1, "no delivery report within 20 s"
    return errors[0]


def _properties(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if line)


@pytest.mark.parametrize("alias", ALIASES)
def test_the_authorizer_enforces_acls_for_the_replicator_and_not_for_thekafka_admin(
    secured_kafka: LocalKafka, alias: str
) -> None:
    topic = f"orders-{uuid.uuid4().hex[:8]}"
    admin = kafka_admin(secured_kafka.client_config(alias, ADMIN))
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(timeout=30)
    replicator = secured_kafka.client_config(alias, REPLICATOR)

    denied = _produce(replicator, topic)
    assert denied is not None and denied.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert topic not in kafka_admin(replicator).list_topics(timeout=10).topics  # DESCRIBE is not granted either

    write = AclBinding(
        ResourceType.TOPIC,
        topic,
        ResourcePatternType.LITERAL,
        f"User:{REPLICATOR}",
        "*",
        AclOperation.WRITE,
        AclPermissionType.ALLOW,
    )
    admin.create_acls([write])[write].result(timeout=30)
    assert _produce(replicator, topic) is None
    assert _produce(secured_kafka.client_config(alias, ADMIN), topic) is None


def test_a_wrong_scram_password_is_refused(secured_kafka: LocalKafka) -> None:
    config = {**secured_kafka.client_config("sec-scram", ADMIN), "sasl.password": "not-the-password"}
    with pytest.raises(KafkaException) as raised:
        kafka_admin(config).list_topics(timeout=5)
    assert raised.value.args[0].code() == KafkaError._TRANSPORT


def test_a_client_without_a_certificate_is_refused_by_the_mtls_cluster(secured_kafka: LocalKafka) -> None:
    config = secured_kafka.client_config("sec-mtls", ADMIN)
    del config["ssl.certificate.location"], config["ssl.key.location"]
    with pytest.raises(KafkaException):
        kafka_admin(config).list_topics(timeout=5)


@pytest.mark.parametrize("alias", ALIASES)
def test_a_plaintext_client_gets_nothing_from_a_secured_cluster(secured_kafka: LocalKafka, alias: str) -> None:
    with pytest.raises(KafkaException):
        kafka_admin({"bootstrap.servers": secured_kafka.bootstraps()[alias]}).list_topics(timeout=5)


@pytest.mark.parametrize("alias", ALIASES)
def test_up_writes_owner_only_client_properties_with_librdkafka_names(secured_kafka: LocalKafka, alias: str) -> None:
    files = secured_kafka.client_properties(alias)
    assert set(files) == {ADMIN, REPLICATOR}
    for principal, path in files.items():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        written = _properties(path)
        assert written == secured_kafka.client_config(alias, principal)
        assert written["security.protocol"] == {"sec-scram": "SASL_SSL", "sec-mtls": "SSL"}[alias]
        # The file alone is enough for a client: the admin lists the cluster's brokers with it.
        if principal == ADMIN:
            assert len(kafka_admin(written).list_topics(timeout=10).brokers) == 1
    assert secured_kafka.securities()[alias] in (Security.SCRAM, Security.MTLS)


def test_the_cli_prints_each_secured_aliass_properties_files_after_its_line(tmp_path: Path) -> None:
    state = tmp_path / "kafka"
    command = [sys.executable, "-m", "localkafka", "--state-dir", str(state), "--port-base", "27192"]
    command += ["--zk-port-base", "27281"]
    try:
        up = subprocess.run(
            [*command, "up", "--clusters", "one:mtls,two"], capture_output=True, text=True, timeout=300, check=False
        )
        assert up.returncode == 0, up.stderr
        assert up.stdout.splitlines() == [
            "one=127.0.0.1:27192",
            f"# one admin: {state.resolve() / 'one' / 'client-admin.properties'}",
            f"# one replicator: {state.resolve() / 'one' / 'client-replicator.properties'}",
            "two=127.0.0.1:27193",
        ]
        status = subprocess.run([*command, "status"], capture_output=True, text=True, timeout=60, check=False)
        assert "one=127.0.0.1:27192 broker=ready kraft" in status.stdout and "security=mtls" in status.stdout
    finally:
        subprocess.run([*command, "down", "--purge"], capture_output=True, timeout=120, check=False)
    assert not any(port_open(p) for p in (27192, 27193, 27281, 27282))


def test_an_unknown_security_kind_is_a_cli_error(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "localkafka", "--state-dir", str(tmp_path), "up", "--clusters", "one:kerberos"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert (
        "one:kerberos: 'kerberos' is neither a Kafka version, a security kind (plaintext, scram, mtls) nor <n>brokers"
        in (done.stderr)
    )
