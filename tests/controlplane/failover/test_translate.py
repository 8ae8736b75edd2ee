"""The order of failover steps, and apply's refusals: groups with members, offsets moving backwards (translating a
position back to its origin is replication/'s, tested in tests/replication/test_translation.py)."""

from __future__ import annotations

import pytest
from confluent_kafka import ConsumerGroupState

from controlplane.clusters.models import Cluster
from controlplane.failover.models import Failover
from controlplane.failover.results import ApplyResult, CheckpointResult, PartitionPlan, StepEntry
from controlplane.failover.services import kafka, offsets
from controlplane.failover.services.machine import next_step
from replication.offsets.groupoffsets import ConsumerGroups
from tests.replication.fakes import FakeGroupAdmin


def test_an_unplanned_failover_skips_the_drain() -> None:
    assert next_step(Failover(mode="unplanned"), "preflight") == "fence"
    assert next_step(Failover(mode="planned"), "preflight") == "drain"
    assert next_step(Failover(mode="planned"), "verify") == "failback"


def test_apply_names_every_offset_that_would_move_backwards() -> None:
    target = FakeGroupAdmin(offsets={"billing": {("us-west.orders", 0): 50, ("us-west.orders", 1): 5}})
    wanted = {"billing": {("us-west.orders", 0): 40, ("us-west.orders", 1): 9, ("us-west.orders", 2): 1}}
    assert offsets._backwards(ConsumerGroups(target), wanted) == ["billing us-west.orders-0: 50 -> 40"]


def _failover(groups: list[str], preview: list[PartitionPlan]) -> Failover:
    west, east = Cluster(alias="us-west"), Cluster(alias="us-east")
    checkpoint = StepEntry(CheckpointResult(preview=tuple(preview)), complete=True)
    return Failover(mode="planned", source=west, target=east, groups=groups, steps={"checkpoint": checkpoint.as_json()})


def _row(group: str, partition: int, offset: int) -> PartitionPlan:
    return PartitionPlan(group, "orders", partition, offset, "us-west.orders", offset, "sync", True)


def test_apply_refuses_a_target_group_with_members_and_writes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    target = FakeGroupAdmin(
        states={"billing": ConsumerGroupState.STABLE, "audit": ConsumerGroupState.EMPTY},
        members={"billing": ["billing-1@10.0.0.7"]},
    )
    monkeypatch.setattr(kafka, "groups", lambda cluster: ConsumerGroups(target, kafka.TIMEOUT))
    failover = _failover(["billing", "audit"], [_row("billing", 0, 40), _row("audit", 0, 7)])
    result, done = offsets.apply_step(failover, {})
    assert not done
    assert result == ApplyResult(error="not EMPTY on the target: billing is STABLE with 1 members")
    assert target.offsets == {}, "not even the empty group is written while another one has members"
    assert set(target.timeouts) == {kafka.TIMEOUT}


def test_apply_writes_the_previewed_offsets_into_empty_and_new_groups(monkeypatch: pytest.MonkeyPatch) -> None:
    target = FakeGroupAdmin(states={"billing": ConsumerGroupState.EMPTY})  # "audit" does not exist yet: DEAD
    monkeypatch.setattr(kafka, "groups", lambda cluster: ConsumerGroups(target, kafka.TIMEOUT))
    failover = _failover(["billing", "audit"], [_row("billing", 0, 40), _row("billing", 1, 3), _row("audit", 0, 7)])
    result, done = offsets.apply_step(failover, {})
    assert done, result
    assert target.offsets == {
        "billing": {("us-west.orders", 0): 40, ("us-west.orders", 1): 3},
        "audit": {("us-west.orders", 0): 7},
    }
