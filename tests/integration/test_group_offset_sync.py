"""Acceptance 4: sync.group.offsets.enabled writes target groups only when they are empty, and only forwards."""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer, ConsumerGroupState, ConsumerGroupTopicPartitions, TopicPartition

from replication.emitters.checkpoints import CheckpointEmitter
from replication.emitters.groupsync import GroupOffsetSync
from tests.support.kafka import admin, create_topic, end_offsets, unique_topic, wait_until
from tests.support.replication import make_flow, produce_known
from tests.support.translation import committed, place_groups, replicate

pytestmark = pytest.mark.kafka


def _state(bootstrap: str, group: str) -> ConsumerGroupState:
    client = admin(bootstrap)  # keep the handle alive until the future resolves
    return client.describe_consumer_groups([group])[group].result(timeout=30).state


def _joined(member: Consumer, bootstrap: str, group: str) -> bool:
    member.poll(0.2)  # serves the join; the records it may return do not matter
    return _state(bootstrap, group) == ConsumerGroupState.STABLE


def test_group_offsets_are_written_only_into_empty_target_groups_and_never_backwards(
    kafka_clusters: dict[str, str],
) -> None:
    src, dst = kafka_clusters["us-east"], kafka_clusters["backup"]
    topic = unique_topic("gsync")
    remote = f"us-east.{topic}"
    create_topic(src, topic, partitions=2)
    produce_known(src, topic, partitions=2, count=2000)
    flow = make_flow(kafka_clusters, "us-east", "backup", topic, sync_group_offsets_enabled=True)
    replicate(flow, lambda: sum(end_offsets(dst, remote, range(2)).values()) >= 2000, "2000 records")
    prefix = unique_topic("gs")
    new, empty, active = place_groups(src, prefix, topic, {0: [400, 400, 400], 1: [700, 700, 700]})
    target = admin(dst)
    seed = [TopicPartition(remote, 0, 100), TopicPartition(remote, 1, 900)]  # behind in 0, ahead in 1
    for group in (empty, active):
        target.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(group, seed)])[group].result(timeout=30)
    member = Consumer({"bootstrap.servers": dst, "group.id": active, "enable.auto.commit": False})
    member.subscribe([remote])
    try:
        wait_until(lambda: _joined(member, dst, active), 60, what="the active member")
        scoped = flow.replace(groups=(f"{prefix}-.*",))
        checkpoints = CheckpointEmitter(scoped)
        sync = GroupOffsetSync(scoped)
        try:
            assert checkpoints.run_once()
            assert sync.run_once()
        finally:
            checkpoints.close()
            sync.close()
        assert sync.skipped_active == {active}
        assert committed(dst, new) == {(remote, 0): 400, (remote, 1): 700}  # no group yet: created
        assert committed(dst, empty) == {(remote, 0): 400, (remote, 1): 900}  # forwards only
        assert committed(dst, active) == {(remote, 0): 100, (remote, 1): 900}  # members: untouched
    finally:
        member.close()


def test_a_consumer_that_joins_between_the_look_and_the_write_makes_the_broker_refuse_it(
    kafka_clusters: dict[str, str],
) -> None:
    """The second line of defence: an admin commit carries no generation, and a group with members refuses it."""
    dst = kafka_clusters["us-west"]
    topic = unique_topic("race")
    create_topic(dst, topic, partitions=1)
    group = unique_topic("race-group")
    member = Consumer({"bootstrap.servers": dst, "group.id": group, "enable.auto.commit": False})
    member.subscribe([topic])
    try:
        wait_until(lambda: _joined(member, dst, group), 60, what="the member")
        request = [ConsumerGroupTopicPartitions(group, [TopicPartition(topic, 0, 5)])]
        client = admin(dst)
        result = client.alter_consumer_group_offsets(request)[group].result(timeout=30)
        assert all(tp.error is not None for tp in result.topic_partitions)
        assert committed(dst, group) == {}
    finally:
        member.close()
