"""Least privilege on real brokers: the standalone runner replicates from a SCRAM source into an mTLS target, both
under enforcing authorizers, as a principal granted exactly `flow_grants` and nothing more, with every side feature
on: config and ACL sync, heartbeats, offset syncs, checkpoints and group offset sync; at least once and exactly once.
"""

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
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)

from localkafka import LocalKafka
from localkafka.security import ADMIN, REPLICATOR
from replication.config.mm2properties import load_flows
from replication.kafka.acls import flow_grants, grant_table
from replication.mm2.properties import parse_properties
from replication.mm2.records import Heartbeat
from tests.support.kafka import admin as kafka_admin
from tests.support.kafka import wait_until

pytestmark = pytest.mark.kafka
REPO = Path(__file__).resolve().parents[2]
SOURCE, TARGET = "sec-scram", "sec-mtls"
PRINCIPAL = f"User:{REPLICATOR}"
RECORDS, PARTITIONS = 200, 2


def _properties(path: Path, kafka: LocalKafka, topic: str, group: str, exactly_once: bool) -> Path:
    lines = [f"clusters = {SOURCE}, {TARGET}"]
    for alias in (SOURCE, TARGET):
        lines += [f"{alias}.{key} = {value}" for key, value in kafka.client_config(alias, REPLICATOR).items()]
    flow = f"{SOURCE}->{TARGET}"
    lines += [
        f"{flow}.enabled = true",
        f"{flow}.topics = {topic}",
        f"{flow}.groups = {group}",
        f"{flow}.exactly.once = {str(exactly_once).lower()}",
        f"{flow}.sync.group.offsets.enabled = true",
        f"{flow}.emit.checkpoints.interval.seconds = 1",
        f"{flow}.sync.group.offsets.interval.seconds = 1",
        f"{flow}.refresh.groups.interval.seconds = 1",
        "offset.flush.interval.ms = 200",
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def _grant(kafka: LocalKafka, config: Path, topic: str, group: str) -> list[str]:
    """Exactly the flow's grants, each on its cluster; returns them as `cluster RESOURCE name OPERATION`."""
    (flow,) = load_flows(parse_properties(config.read_text()))
    given = []
    for grant in flow_grants(flow, [topic], [group]):
        admin = kafka_admin(kafka.client_config(SOURCE if grant.cluster == "source" else TARGET, ADMIN))
        binding = grant.binding(PRINCIPAL)
        admin.create_acls([binding])[binding].result(timeout=30)
        given.append(f"{grant.cluster} {grant.resource} {grant.name} {grant.operation}")
    return given


def _source_acl(kafka: LocalKafka, topic: str, operation: AclOperation) -> AclBinding:
    return AclBinding(
        ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, "User:app", "*", operation, AclPermissionType.ALLOW
    )


def _target_topic_acls(kafka: LocalKafka, remote: str) -> set[str]:
    admin = kafka_admin(kafka.client_config(TARGET, ADMIN))
    wanted = AclBindingFilter(
        ResourceType.TOPIC, remote, ResourcePatternType.LITERAL, None, None, AclOperation.ANY, AclPermissionType.ANY
    )
    return {f"{b.principal} {b.operation.name}" for b in admin.describe_acls(wanted).result(timeout=30)}


def _commit(consumer: Consumer, offsets: list[TopicPartition]) -> bool:
    """Commit, or False while the group coordinator of a fresh cluster is still loading."""
    try:
        consumer.commit(offsets=offsets, asynchronous=False)
        return True
    except KafkaException:
        return False


def _committed(config: dict[str, str], group: str, topic: str) -> list[int]:
    """The group's committed offsets at the target; none while its coordinator is still loading."""
    consumer = Consumer({**config, "group.id": group, "enable.auto.commit": False})
    try:
        found = consumer.committed([TopicPartition(topic, p) for p in range(PARTITIONS)], timeout=10)
        return [tp.offset for tp in found]
    except KafkaException:
        return []
    finally:
        consumer.close()


def _records(config: dict[str, str], topic: str, exactly_once: bool) -> list[tuple[int, bytes]]:
    consumer = Consumer(
        {
            **config,
            "group.id": f"check-{uuid.uuid4().hex[:6]}",
            "enable.auto.commit": False,
            "isolation.level": "read_committed" if exactly_once else "read_uncommitted",
        }
    )
    try:
        ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in range(PARTITIONS)}
        consumer.assign([TopicPartition(topic, p, 0) for p in range(PARTITIONS)])
        seen: list[tuple[int, bytes]] = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            positions = {tp.partition: tp.offset for tp in consumer.position(consumer.assignment())}
            if all(positions.get(p, 0) >= ends[p] for p in range(PARTITIONS)):
                break
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                seen.append((msg.partition() or 0, msg.value() or b""))
        return sorted(seen)
    finally:
        consumer.close()


def _heartbeat_flows(config: dict[str, str], topic: str) -> set[tuple[str, str]]:
    """The (source, target) keys of every heartbeat in the topic's single partition."""
    consumer = Consumer({**config, "group.id": f"check-{uuid.uuid4().hex[:6]}", "enable.auto.commit": False})
    try:
        end = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)[1]
        consumer.assign([TopicPartition(topic, 0, 0)])
        found: set[tuple[str, str]] = set()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and consumer.position([TopicPartition(topic, 0)])[0].offset < end:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                beat = Heartbeat.from_bytes(msg.key(), msg.value())
                found.add((beat.source_cluster_alias, beat.target_cluster_alias))
        return found
    finally:
        consumer.close()


@pytest.mark.parametrize("exactly_once", [False, True], ids=["at-least-once", "exactly-once"])
def test_a_flow_runs_with_exactly_its_grants_from_scram_into_mtls(
    secured_kafka: LocalKafka, replicator_grants_revoked: None, tmp_path: Path, exactly_once: bool
) -> None:
    tag = uuid.uuid4().hex[:8]
    topic, group, remote = f"orders-{tag}", f"app-{tag}", f"{SOURCE}.orders-{tag}"
    source_admin = kafka_admin(secured_kafka.client_config(SOURCE, ADMIN))
    source_admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(timeout=30)
    read, write = (_source_acl(secured_kafka, topic, op) for op in (AclOperation.READ, AclOperation.WRITE))
    for future in source_admin.create_acls([read, write]).values():
        future.result(timeout=30)
    producer = Producer(secured_kafka.client_config(SOURCE, ADMIN))
    sent = sorted((i % PARTITIONS, f"record-{i}".encode()) for i in range(RECORDS))
    for partition, value in sent:
        producer.produce(topic, value, partition=partition)
    assert producer.flush(30) == 0
    app = Consumer({**secured_kafka.client_config(SOURCE, ADMIN), "group.id": group, "enable.auto.commit": False})
    wait_until(lambda: _commit(app, [TopicPartition(topic, 0, 60), TopicPartition(topic, 1, 40)]), what="a commit")
    app.close()

    config = _properties(tmp_path / "mm2.properties", secured_kafka, topic, group, exactly_once)
    granted = _grant(secured_kafka, config, topic, group)
    log_path = tmp_path / "runner.log"
    with open(log_path, "wb") as log:
        runner = subprocess.Popen(
            [sys.executable, "-m", "replication", "run", "--config", str(config)], cwd=REPO, stdout=log, stderr=log
        )
    try:
        target = secured_kafka.client_config(TARGET, ADMIN)
        wait_until(
            lambda: runner.poll() is not None or _committed(target, group, remote) == [60, 40],
            timeout=90,
            interval=1,
            what="the group's offsets synced to the target",
        )
        wait_until(
            lambda: (
                runner.poll() is not None
                or f"User:app {AclOperation.READ.name}" in _target_topic_acls(secured_kafka, remote)
            ),
            timeout=60,
            interval=1,
            what="the READ ACL synced to the remote topic",
        )
        assert runner.poll() is None, log_path.read_text()[-3000:]
        assert _records(target, remote, exactly_once) == sent
    finally:
        runner.send_signal(signal.SIGTERM)
        runner.wait(timeout=60)
    output = log_path.read_text()
    assert runner.returncode == 0, output[-3000:]
    assert not [line for line in output.splitlines() if " ERROR " in line or "authorization" in line.lower()], output[
        -3000:
    ]
    # KIP-382: READ is copied to the remote topic, WRITE never is (the replicator's own grants are copied too).
    assert {acl for acl in _target_topic_acls(secured_kafka, remote) if acl.startswith("User:app ")} == {
        "User:app READ"
    }
    assert f"target TOPIC {SOURCE}. ALTER" in granted and f"source TOPIC {topic} READ" in granted
    # Heartbeats where MM2 writes them: the flow's into the target, its reverse pair's into the source, copied on.
    assert {"target TOPIC heartbeats WRITE", "source TOPIC heartbeats WRITE"} <= set(granted)
    assert _heartbeat_flows(target, "heartbeats") == {(SOURCE, TARGET)}
    assert _heartbeat_flows(secured_kafka.client_config(SOURCE, ADMIN), "heartbeats") == {(TARGET, SOURCE)}
    assert _heartbeat_flows(target, f"{SOURCE}.heartbeats") == {(TARGET, SOURCE)}
    assert any("TRANSACTIONAL_ID" in g for g in granted) is exactly_once


def test_the_readmes_least_privilege_table_is_the_one_the_code_grants() -> None:
    assert grant_table() in (REPO / "README.md").read_text()
