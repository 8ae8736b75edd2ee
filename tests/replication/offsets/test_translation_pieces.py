"""Checkpoint monotonicity, group offset sync decisions, MirrorClient reachability, CLI output, the schedule."""

from __future__ import annotations

from replication.cli.offsets import format_csv, format_table
from replication.emitters.checkpoints import advances
from replication.emitters.groupsync import offsets_to_write
from replication.emitters.periodic import CheckpointSchedule
from replication.mm2.policy import DefaultReplicationPolicy
from replication.mm2.records import Checkpoint
from replication.offsets.mirrorclient import replication_hops, upstream_clusters
from replication.offsets.translation import SYNC, TIMESTAMP, Translation


def _cp(upstream: int, downstream: int) -> Checkpoint:
    return Checkpoint("app", "us-west.orders", 0, upstream, downstream)


def test_a_checkpoint_is_written_when_it_moves_forward_or_the_group_was_reset() -> None:
    assert advances(None, _cp(10, 10))
    assert not advances(_cp(10, 10), _cp(10, 10))  # unchanged: nothing to write
    assert advances(_cp(10, 10), _cp(15, 12))
    assert advances(_cp(10, 10), _cp(12, 10))  # upstream moved over records that were not replicated
    assert not advances(_cp(10, 10), _cp(12, 9))  # never backwards while the group moved forward
    assert advances(_cp(10, 10), _cp(4, 4))  # the group was reset backwards: follow it


def test_group_offsets_only_move_forward() -> None:
    checkpoints = {("us-west.orders", 0): _cp(10, 10), ("us-west.orders", 1): _cp(50, 48)}
    writes = offsets_to_write(checkpoints, {("us-west.orders", 0): 12, ("us-west.orders", 1): 20})
    assert [(tp.topic, tp.partition, tp.offset) for tp in writes] == [("us-west.orders", 1, 48)]
    assert [tp.offset for tp in offsets_to_write(checkpoints, {})] == [10, 48]  # nothing committed yet


def test_hops_and_upstream_clusters_come_from_heartbeat_topic_names() -> None:
    policy = DefaultReplicationPolicy()
    topics = ["heartbeats", "us-east.heartbeats", "us-east.us-west.heartbeats", "us-west.orders", "backup.x"]
    assert upstream_clusters(policy, topics) == {"us-east", "us-west"}
    assert replication_hops(policy, topics, "us-east") == 1
    assert replication_hops(policy, topics, "us-west") == 2  # only heartbeats count, not us-west.orders
    assert replication_hops(policy, topics, "backup") == -1
    assert replication_hops(policy, [*topics, "us-west.heartbeats"], "us-west") == 1  # the shortest path wins


def test_csv_is_what_reset_offsets_from_file_reads_and_the_table_flags_approximations() -> None:
    rows = [
        Translation("orders", 0, "us-west.orders", 1500, 1498, SYNC, 2),
        Translation("orders", 1, "us-west.orders", 900, 870, TIMESTAMP, 30, "approximate: window"),
    ]
    assert format_csv(rows) == "us-west.orders,0,1498\nus-west.orders,1,870\n"
    table = format_table(rows).splitlines()
    assert table[0].split() == [
        "TOPIC",
        "PARTITION",
        "UPSTREAM-OFFSET",
        "REMOTE-TOPIC",
        "DOWNSTREAM-OFFSET",
        "METHOD",
        "LAG",
    ]
    assert table[1].split() == ["orders", "0", "1500", "us-west.orders", "1498", "sync", "2"]
    assert table[2].split() == ["orders", "1", "900", "us-west.orders", "870", "timestamp", "30"]
    assert table[-1] == "orders-1: approximate: window"


class _FakeEmitter:
    emit_interval = 5.0
    retry_interval = 0.2

    def __init__(self) -> None:
        self.untranslated = 0
        self.calls: list[str] = []

    def run_once(self) -> bool:
        self.calls.append("round")
        return True

    def retry_untranslated(self) -> bool:
        self.calls.append("retry")
        return False

    def close(self) -> None:
        pass


def test_the_schedule_runs_full_rounds_every_interval_and_retries_only_what_waits_for_syncs() -> None:
    now = [100.0]
    emitter = _FakeEmitter()
    schedule = CheckpointSchedule(emitter, clock=lambda: now[0])  # type: ignore[arg-type]
    schedule.run_once()
    assert schedule.interval == 5.0
    emitter.untranslated = 3
    assert schedule.interval == 0.2
    now[0] += 0.2
    schedule.run_once()
    now[0] += 4.8
    schedule.run_once()
    assert emitter.calls == ["round", "retry", "round"]
