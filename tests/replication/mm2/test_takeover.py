"""MM2's offsets storage records (Connect's JSON, MirrorUtils.wrapPartition/wrapOffset) and the takeover's start."""

from __future__ import annotations

import json

import pytest

from replication.mm2.records import OffsetSync
from replication.mm2.takeover import OffsetRecordError, anchor, committed_positions, decode_offset, plan


def _key(topic: str, partition: int, cluster: str = "us-west", connector: str = "MirrorSourceConnector") -> bytes:
    return json.dumps([connector, {"cluster": cluster, "partition": partition, "topic": topic}]).encode()


def _offset(offset: int) -> bytes:
    return json.dumps({"offset": offset}).encode()


def test_the_committed_position_is_one_past_the_last_committed_record_and_the_last_commit_wins() -> None:
    records = [(_key("orders", 0), _offset(9)), (_key("orders", 1), _offset(4)), (_key("orders", 0), _offset(41))]
    assert committed_positions(records, "us-west") == {("orders", 0): 42, ("orders", 1): 5}


def test_a_deleted_entry_and_connects_minus_one_leave_no_position() -> None:
    records = [(_key("orders", 0), _offset(9)), (_key("orders", 0), None), (_key("orders", 1), _offset(-1))]
    assert committed_positions(records, "us-west") == {}


def test_checkpoint_and_heartbeat_entries_and_other_sources_are_skipped() -> None:
    checkpoint = json.dumps(["MirrorCheckpointConnector", {"group": "g", "topic": "t", "partition": 0}]).encode()
    heartbeat = json.dumps(["MirrorHeartbeatConnector", {"sourceClusterAlias": "a", "targetClusterAlias": "b"}])
    records = [
        (checkpoint, _offset(0)),
        (heartbeat.encode(), _offset(0)),
        (_key("orders", 0, cluster="eu-central"), _offset(7)),
        (_key("orders", 0), _offset(3)),
    ]
    assert committed_positions(records, "us-west") == {("orders", 0): 4}


@pytest.mark.parametrize(
    ("key", "value"),
    [(b"not json", b"{}"), (b'{"a": 1}', b"{}"), (_key("orders", 0), b'{"offset": "7"}'), (_key("orders", 0), b"[]")],
)
def test_a_record_that_is_not_connects_json_is_refused_by_name(key: bytes, value: bytes) -> None:
    with pytest.raises(OffsetRecordError):
        decode_offset(key, value, "us-west")


def test_the_anchor_is_the_newest_sync_at_or_before_the_committed_position() -> None:
    # A restarted MM2 copied again from its commit at 150: the older run's sync (180, 180) names copies it replaced.
    syncs = [OffsetSync("t", 0, 100, 100), OffsetSync("t", 0, 180, 180), OffsetSync("t", 0, 150, 181)]
    assert anchor(syncs, 200) == OffsetSync("t", 0, 150, 181)
    assert anchor(syncs, 120) == OffsetSync("t", 0, 100, 100)
    assert anchor(syncs, 99) is None


def test_the_plan_stores_the_anchor_keeps_mirrorplanes_positions_and_copies_again_without_a_sync() -> None:
    committed = {("t", 0): 200, ("t", 1): 50, ("t", 2): 70}
    syncs = {("t", 0): [OffsetSync("t", 0, 190, 95)], ("t", 2): [OffsetSync("t", 2, 60, 60)]}
    planned = plan(committed, syncs, {"t": "us-west.t"}, stored=[("t", 2)])
    assert [(p.partition, p.committed, p.start, p.downstream, p.kept) for p in planned] == [
        (0, 200, 190, 95, False),
        (1, 50, 50, None, False),
        (2, 70, 60, 60, True),
    ]
    assert "copied again" in planned[1].note
    assert planned[2].note.startswith("kept")
