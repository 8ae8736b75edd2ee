"""A flow whose principal loses an ACL mid-stream (READ on its source topic, WRITE on its remote topic), on real
brokers under an enforcing authorizer: the runner names the missing ACL within 15 s, loses nothing while it is gone,
and copies every record exactly once it is back, at least once and exactly once."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import (
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    NewTopic,
)

from localkafka import LocalKafka
from localkafka.security import ADMIN, REPLICATOR
from replication.config.mm2properties import load_flows
from replication.kafka.acls import flow_grants
from replication.mm2.properties import parse_properties
from tests.integration.test_least_privilege import PRINCIPAL, SOURCE, TARGET
from tests.support.kafka import admin as kafka_admin
from tests.support.kafka import wait_until

pytestmark = pytest.mark.kafka
REPO = Path(__file__).resolve().parents[2]


def _produce(kafka: LocalKafka, topic: str, first: int, count: int) -> None:
    producer = Producer(kafka.client_config(SOURCE, ADMIN))
    for i in range(first, first + count):
        producer.produce(topic, f"r-{i}".encode(), partition=0)
    assert producer.flush(30) == 0


def _values(config: dict[str, str], topic: str) -> list[bytes]:
    group = f"v-{uuid.uuid4().hex[:6]}"
    consumer = Consumer({**config, "group.id": group, "enable.auto.commit": False, "isolation.level": "read_committed"})
    try:
        end = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)[1]
        consumer.assign([TopicPartition(topic, 0, 0)])
        seen: list[bytes] = []
        deadline = time.monotonic() + 30
        # To the end offset, not to a count: exactly once, transaction markers and aborted records take offsets.
        while consumer.position([TopicPartition(topic, 0)])[0].offset < end and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                seen.append(msg.value() or b"")
        return seen
    except KafkaException:
        return []
    finally:
        consumer.close()


@pytest.mark.parametrize("exactly_once", [False, True], ids=["at-least-once", "exactly-once"])
@pytest.mark.parametrize("lost", ["READ", "WRITE"])
def test_a_revoked_acl_is_named_loses_nothing_and_resumes_when_granted_again(
    secured_kafka: LocalKafka, replicator_grants_revoked: None, tmp_path: Path, lost: str, exactly_once: bool
) -> None:
    topic = f"ledger-{uuid.uuid4().hex[:8]}"
    remote = f"{SOURCE}.{topic}"
    source_admin = kafka_admin(secured_kafka.client_config(SOURCE, ADMIN))
    source_admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(timeout=30)
    lines = [f"clusters = {SOURCE}, {TARGET}"]
    for alias in (SOURCE, TARGET):
        lines += [f"{alias}.{k} = {v}" for k, v in secured_kafka.client_config(alias, REPLICATOR).items()]
    lines += [f"{SOURCE}->{TARGET}.enabled = true", f"{SOURCE}->{TARGET}.topics = {topic}"]
    lines += [f"{SOURCE}->{TARGET}.exactly.once = {str(exactly_once).lower()}"]
    lines += ["offset.flush.interval.ms = 200", "refresh.topics.interval.seconds = 1"]
    config = tmp_path / "mm2.properties"
    config.write_text("\n".join(lines) + "\n")
    (flow,) = load_flows(parse_properties(config.read_text()))
    grants = flow_grants(flow, [topic])
    for grant in grants:
        admin = kafka_admin(secured_kafka.client_config(SOURCE if grant.cluster == "source" else TARGET, ADMIN))
        binding = grant.binding(PRINCIPAL)
        admin.create_acls([binding])[binding].result(timeout=30)
    cluster, name = ("source", topic) if lost == "READ" else ("target", remote)
    # WRITE on the target is granted for the remote topics' prefix (the source alias and the separator).
    revoked = next(g for g in grants if g.cluster == cluster and name.startswith(g.name) and g.operation == lost)
    revoking_admin = source_admin if lost == "READ" else kafka_admin(secured_kafka.client_config(TARGET, ADMIN))
    # WRITE is granted on the remote topics' prefix, so losing it refuses every remote topic (the remote heartbeats
    # topic's records may be the first refused); exactly once, a refused AddPartitionsToTxn names no topic, and the
    # line lists the transaction's.
    named = f"{SOURCE if lost == 'READ' else TARGET} refused {lost} on TOPIC " + (
        topic if lost == "READ" else f"{SOURCE}."
    )
    target = secured_kafka.client_config(TARGET, ADMIN)

    _produce(secured_kafka, topic, 0, 100)
    log_path = tmp_path / "runner.log"
    with open(log_path, "wb") as log:
        runner = subprocess.Popen(
            [sys.executable, "-m", "replication", "run", "--config", str(config)], cwd=REPO, stdout=log, stderr=log
        )
    try:
        wait_until(lambda: len(_values(target, remote)) >= 100, timeout=90, interval=1, what="the first 100")
        binding = revoked.binding(PRINCIPAL)
        revoke = AclBindingFilter(
            binding.restype,
            binding.name,
            binding.resource_pattern_type,
            binding.principal,
            None,
            getattr(AclOperation, lost),
            AclPermissionType.ALLOW,
        )
        revoking_admin.delete_acls([revoke])[revoke].result(timeout=30)
        revoked_at = time.monotonic()
        _produce(secured_kafka, topic, 100, 100)
        wait_until(
            lambda: named in log_path.read_text(),
            timeout=30,
            interval=0.5,
            what="the missing ACL named in the log",
        )
        assert time.monotonic() - revoked_at < 15
        assert runner.poll() is None, log_path.read_text()[-3000:]
        time.sleep(5)  # a while refused: nothing may be skipped, and the log must not fill
        assert runner.poll() is None, log_path.read_text()[-3000:]
        revoking_admin.create_acls([binding])[binding].result(timeout=30)
        wait_until(lambda: len(_values(target, remote)) >= 200, timeout=90, interval=1, what="the records after")
    finally:
        runner.send_signal(signal.SIGTERM)
        runner.wait(timeout=60)
    assert _values(target, remote) == [f"r-{i}".encode() for i in range(200)]
    said = [line for line in log_path.read_text().splitlines() if f"refused {lost}" in line]
    assert 1 <= len(said) <= 3, said  # named once (and when it clears), not a flood
