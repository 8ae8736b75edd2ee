"""Which consumer groups may be written, and reading and writing their offsets: the one implementation that group
offset sync and a failover's apply step share (on real brokers in tests/integration/test_group_offset_sync.py)."""

from __future__ import annotations

from confluent_kafka import ConsumerGroupState, TopicPartition

from replication.offsets.groupoffsets import ConsumerGroups
from tests.replication.fakes import FakeGroupAdmin

EMPTY, STABLE = ConsumerGroupState.EMPTY, ConsumerGroupState.STABLE


def test_only_a_group_without_members_and_empty_or_dead_is_writable() -> None:
    admin = FakeGroupAdmin(
        states={
            "idle": EMPTY,
            "busy": STABLE,
            "joining": ConsumerGroupState.PREPARING_REBALANCING,
            "odd": EMPTY,
            "unknown": ConsumerGroupState.UNKNOWN,
        },
        members={"busy": ["app-1@10.0.0.1"], "odd": ["app-2@10.0.0.2"]},
    )
    states = ConsumerGroups(admin).describe(["idle", "new", "busy", "joining", "odd", "unknown"])
    assert {group for group, state in states.items() if state.writable} == {"idle", "new"}  # "new": DEAD
    assert (states["busy"].state, states["busy"].members) == ("STABLE", ("app-1@10.0.0.1",))


def test_committed_offsets_leave_out_partitions_without_a_commit() -> None:
    admin = FakeGroupAdmin(offsets={"billing": {("orders", 0): 12, ("orders", 1): 0}})
    assert ConsumerGroups(admin).committed("billing") == {("orders", 0): 12, ("orders", 1): 0}


def test_a_write_the_broker_refuses_is_reported_per_partition_and_every_call_has_the_deadline() -> None:
    admin = FakeGroupAdmin(states={"busy": STABLE}, members={"busy": ["app-1@10.0.0.1"]})
    groups = ConsumerGroups(admin, timeout=2.5)
    writes = [TopicPartition("orders", 0, 40), TopicPartition("orders", 1, 9)]
    assert groups.alter("idle", writes) == {}
    refused = groups.alter("busy", writes)
    assert sorted(refused) == [("orders", 0), ("orders", 1)]
    assert all("UNKNOWN_MEMBER_ID" in reason for reason in refused.values())
    assert admin.offsets == {"idle": {("orders", 0): 40, ("orders", 1): 9}}
    assert admin.timeouts == [2.5, 2.5]
