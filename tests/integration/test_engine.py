"""The replication engine on real clusters: fidelity, cycles, no-restart discovery, config/ACL sync, data loss."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import TopicPartition
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    ConfigResource,
    NewPartitions,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)

from replication.task.dataloss import DataLossError
from tests.support.kafka import (
    admin,
    consume_all,
    create_topic,
    end_offsets,
    topic_partitions,
    unique_topic,
    wait_until,
)
from tests.support.replication import drive, drive_for, make_flow, new_task, produce_known

pytestmark = pytest.mark.kafka


def _total(bootstrap: str, topic: str, partitions: int) -> int:
    """Records in the topic; 0 until it exists with all its partitions."""
    if topic_partitions(bootstrap, topic) < partitions:
        return 0
    return sum(end_offsets(bootstrap, topic, range(partitions)).values())


def test_200k_records_replicate_with_identical_bytes_partition_and_order(kafka_clusters: dict[str, str]) -> None:
    src, dst = kafka_clusters["us-west"], kafka_clusters["us-east"]
    topic = unique_topic("fidelity")
    create_topic(src, topic, partitions=8)
    produce_known(src, topic, partitions=8, count=200_000)
    task = new_task(make_flow(kafka_clusters, "us-west", "us-east", topic))
    remote = f"us-west.{topic}"
    try:
        drive([task], lambda: _total(dst, remote, 8) >= 200_000, timeout=120, what="200k records at the target")
    finally:
        task.close()
    assert topic_partitions(dst, remote) == 8
    source = consume_all(src, topic, 8, 200_000)
    target = consume_all(dst, remote, 8, 200_000)
    assert len(target) == 200_000
    for p in range(8):
        want = [(m.key(), m.value(), m.headers(), m.timestamp()) for m in source if m.partition() == p]
        got = [(m.key(), m.value(), m.headers(), m.timestamp()) for m in target if m.partition() == p]
        assert got == want, f"partition {p} differs"
    assert end_offsets(dst, remote, range(8)) == end_offsets(src, topic, range(8))


def test_positions_are_stored_in_the_target_and_a_restart_resumes_there(kafka_clusters: dict[str, str]) -> None:
    src, dst = kafka_clusters["us-west"], kafka_clusters["backup"]
    topic = unique_topic("resume")
    create_topic(src, topic, partitions=2)
    produce_known(src, topic, partitions=2, count=1000)
    flow = make_flow(kafka_clusters, "us-west", "backup", topic)
    task = new_task(flow)
    drive([task], lambda: _total(dst, f"us-west.{topic}", 2) == 1000)
    task.close()
    produce_known(src, topic, partitions=2, count=500, start=1000)
    again = new_task(flow)
    assert {k: (s.acked_next, s.stored_next) for k, s in again.states.items() if k[0] == topic} == {
        (topic, 0): (500, 500),
        (topic, 1): (500, 500),
    }
    drive([again], lambda: _total(dst, f"us-west.{topic}", 2) == 1500)
    again.close()
    values = [m.value() for m in consume_all(dst, f"us-west.{topic}", 2, 1500)]
    assert len(set(values)) == 1500  # nothing replicated twice after a clean stop


def test_opposite_flows_never_create_cycle_topics_with_the_default_policy(kafka_clusters: dict[str, str]) -> None:
    a, b = kafka_clusters["us-west"], kafka_clusters["us-east"]
    topic = unique_topic("cyc")
    create_topic(a, topic, partitions=1)
    create_topic(b, topic, partitions=1)
    produce_known(a, topic, 1, 20)
    produce_known(b, topic, 1, 30)
    pattern = f".*{topic}"
    ab = new_task(make_flow(kafka_clusters, "us-west", "us-east", pattern))
    ba = new_task(make_flow(kafka_clusters, "us-east", "us-west", pattern))
    drive([ab, ba], lambda: _total(b, f"us-west.{topic}", 1) == 20 and _total(a, f"us-east.{topic}", 1) == 30)
    drive_for([ab, ba], 30)  # more refreshes: the remote topics are now candidates for the opposite flow
    for task in (ab, ba):
        task.close()
    topics_a = set(admin(a).list_topics(timeout=10).topics)
    topics_b = set(admin(b).list_topics(timeout=10).topics)
    assert {t for t in topics_a | topics_b if topic in t} == {topic, f"us-west.{topic}", f"us-east.{topic}"}


def test_identity_policy_flows_both_ways_never_echo_records(kafka_clusters: dict[str, str]) -> None:
    a, b = kafka_clusters["us-west"], kafka_clusters["backup"]
    topic = unique_topic("echo")
    create_topic(a, topic, partitions=1)
    create_topic(b, topic, partitions=1)
    produce_known(a, topic, 1, 100)
    produce_known(b, topic, 1, 50, start=1000)
    identity = {"replication_policy_class": "IdentityReplicationPolicy"}
    ab = new_task(make_flow(kafka_clusters, "us-west", "backup", topic, **identity))
    ba = new_task(make_flow(kafka_clusters, "backup", "us-west", topic, **identity))
    drive([ab, ba], lambda: _total(a, topic, 1) >= 150 and _total(b, topic, 1) >= 150)
    drive_for([ab, ba], 40)
    for task in (ab, ba):
        task.close()
    assert _total(a, topic, 1) == 150
    assert _total(b, topic, 1) == 150
    values_a = sorted(m.value() for m in consume_all(a, topic, 1, 150))
    values_b = sorted(m.value() for m in consume_all(b, topic, 1, 150))
    assert values_a == values_b and len(set(values_a)) == 150


def test_new_partitions_new_topics_and_config_changes_arrive_without_restart(kafka_clusters: dict[str, str]) -> None:
    src, dst = kafka_clusters["us-east"], kafka_clusters["backup"]
    prefix = unique_topic("live")
    first, second = f"{prefix}-a", f"{prefix}-b"
    create_topic(src, first, partitions=2, config={"retention.ms": "3600000"})
    task = new_task(make_flow(kafka_clusters, "us-east", "backup", f"{prefix}-.*"))
    try:
        drive([task], lambda: topic_partitions(dst, f"us-east.{first}") == 2)
        client = admin(src)
        client.create_partitions([NewPartitions(first, 4)])[first].result(timeout=30)
        produce_known(src, first, partitions=4, count=40)
        create_topic(src, second, partitions=3)
        produce_known(src, second, partitions=3, count=30)
        resource = ConfigResource(ResourceType.TOPIC, first, set_config={"retention.ms": "7200000"})
        client.alter_configs([resource])[resource].result(timeout=30)

        def arrived() -> bool:
            return (
                _total(dst, f"us-east.{first}", 4) == 40
                and _total(dst, f"us-east.{second}", 3) == 30
                and _remote_config(dst, f"us-east.{first}", "retention.ms") == "7200000"
            )

        drive([task], arrived, what="new partitions, new topic and config at the target")
    finally:
        task.close()
    assert topic_partitions(dst, f"us-east.{first}") == 4
    assert end_offsets(dst, f"us-east.{first}", range(4)) == {0: 10, 1: 10, 2: 10, 3: 10}


def test_a_hundred_new_partitions_are_picked_up_within_refresh_plus_ten_seconds(kafka_clusters: dict[str, str]) -> None:
    # One blocking watermark call per new partition, each behind the fetch long-poll (~0.5 s), would make 200 new
    # partitions take 104 s; their offsets come from two ListOffsets calls for all of them.
    src, dst = kafka_clusters["us-east"], kafka_clusters["backup"]
    prefix = unique_topic("pickup")
    create_topic(src, f"{prefix}-seed", partitions=1)
    produce_known(src, f"{prefix}-seed", partitions=1, count=10)
    task = new_task(make_flow(kafka_clusters, "us-east", "backup", f"{prefix}-.*", sync_topic_configs_enabled=False))
    try:
        ours = lambda: [key for key in task.states if key[0].startswith(prefix)]  # noqa: E731  # heartbeats flow too
        drive([task], lambda: len(ours()) == 1 and task.states[(f"{prefix}-seed", 0)].acked_next == 10)
        client = admin(src)
        topics = [f"{prefix}-{i}" for i in range(10)]
        for future in client.create_topics([NewTopic(name, 10, 1) for name in topics]).values():
            future.result(timeout=30)
        wait_until(lambda: all(topic_partitions(src, name) == 10 for name in topics), what="source metadata")
        for name in topics:
            produce_known(src, name, partitions=10, count=20)
        created = time.monotonic()
        drive([task], lambda: len(ours()) == 101, timeout=60, what="100 new partitions assigned")
        picked_up = time.monotonic() - created
        assert picked_up < task.flow.refresh_topics_interval_seconds + 10, f"picked up in {picked_up:.1f}s"
        drive([task], lambda: all(_total(dst, f"us-east.{name}", 10) == 20 for name in topics), what="records")
    finally:
        task.close()


def _remote_config(bootstrap: str, topic: str, name: str) -> str | None:
    client = admin(bootstrap)
    resource = ConfigResource(ResourceType.TOPIC, topic)
    return str(client.describe_configs([resource])[resource].result(timeout=10)[name].value)


def test_acls_sync_like_mm2_literal_allow_without_write_and_all_becomes_read(kafka_clusters: dict[str, str]) -> None:
    src, dst = kafka_clusters["us-west"], kafka_clusters["us-east"]
    topic = unique_topic("acl")
    create_topic(src, topic, partitions=1)
    grants = [("User:alice", AclOperation.READ), ("User:bob", AclOperation.WRITE), ("User:carol", AclOperation.ALL)]
    bindings = [
        AclBinding(ResourceType.TOPIC, topic, ResourcePatternType.LITERAL, who, "*", op, AclPermissionType.ALLOW)
        for who, op in grants
    ]
    client = admin(src)
    for future in client.create_acls(bindings).values():
        future.result(timeout=30)
    task = new_task(make_flow(kafka_clusters, "us-west", "us-east", topic))
    task.close()
    remote = f"us-west.{topic}"
    target = admin(dst)
    found = target.describe_acls(
        AclBindingFilter(
            ResourceType.TOPIC,
            remote,
            ResourcePatternType.LITERAL,
            None,
            None,
            AclOperation.ANY,
            AclPermissionType.ANY,
        )
    ).result(timeout=30)
    assert sorted((b.principal, b.operation, b.permission_type) for b in found) == [
        ("User:alice", AclOperation.READ, AclPermissionType.ALLOW),
        ("User:carol", AclOperation.READ, AclPermissionType.ALLOW),
    ]


def test_records_deleted_before_replication_are_reported_with_their_exact_count(kafka_clusters: dict[str, str]) -> None:
    src, dst = kafka_clusters["us-east"], kafka_clusters["us-west"]
    topic = unique_topic("loss")
    create_topic(src, topic, partitions=1)
    produce_known(src, topic, 1, 100)
    flow = make_flow(kafka_clusters, "us-east", "us-west", topic)
    task = new_task(flow)
    drive([task], lambda: _total(dst, f"us-east.{topic}", 1) == 100)
    task.close()
    produce_known(src, topic, 1, 50, start=100)
    client = admin(src)
    for future in client.delete_records([TopicPartition(topic, 0, 130)]).values():
        future.result(timeout=30)
    with pytest.raises(DataLossError) as caught:
        new_task(flow)
    assert caught.value.lost == 30
    assert "offsets 100..129" in caught.value.reason
    resumed = new_task(flow.replace(on_data_loss="continue"))
    drive([resumed], lambda: _total(dst, f"us-east.{topic}", 1) == 120)
    resumed.close()
    lost = resumed.metrics.snapshot()["flows"][flow.name]["partitions"][f"{topic}-0"]
    assert lost["record-lost-count"] == 30
