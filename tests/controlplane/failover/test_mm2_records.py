"""MirrorMaker 2's records read without Kafka: its Connect offsets, and the preview's bound from sparse syncs."""

from __future__ import annotations

import json

from controlplane.failover.results import DrainPartition
from controlplane.failover.services import drain, mm2
from replication.mm2.records import OffsetSync
from replication.offsets.syncstore import OffsetSyncStore


def _key(cluster: str, topic: str, partition: int) -> bytes:
    return json.dumps(["MirrorSourceConnector", {"cluster": cluster, "partition": partition, "topic": topic}]).encode()


def test_mm2_connect_offsets_give_the_next_position_of_the_pairs_source_partitions_only() -> None:
    found: dict[tuple[str, int], int] = {}
    mm2._position(_key("us-west", "orders", 0), b'{"offset": 499}', "us-west", found)
    mm2._position(_key("us-west", "orders", 1), b'{"offset": 9}', "us-west", found)
    mm2._position(_key("us-west", "orders", 1), b'{"offset": 249}', "us-west", found)  # newer wins
    mm2._position(_key("backup", "orders", 2), b'{"offset": 5}', "us-west", found)  # another source
    mm2._position(b'["MirrorCheckpointConnector", {}]', b'{"offset": 1}', "us-west", found)
    mm2._position(b"not json", b"{}", "us-west", found)
    assert found == {("orders", 0): 500, ("orders", 1): 250}
    mm2._position(_key("us-west", "orders", 0), None, "us-west", found)  # a tombstone forgets it
    assert found == {("orders", 1): 250}


def test_plans_resume_one_past_the_sync_below_and_the_bound_is_the_largest_re_read() -> None:
    store = OffsetSyncStore()
    for partition, syncs in {0: [(0, 0), (101, 101), (303, 303)], 1: [(0, 0), (202, 202)]}.items():
        for upstream, downstream in syncs:
            store.add(OffsetSync("orders", partition, upstream, downstream))
    plans = [
        mm2._plan(store, "billing", "orders", 0, 333, "us-west.orders"),
        mm2._plan(store, "billing", "orders", 1, 202, "us-west.orders"),
    ]
    assert [(p.downstream_offset, p.reread, p.skipped, p.exact) for p in plans] == [
        (304, 29, 0, False),
        (202, 0, 0, True),
    ]
    text = mm2.precision(store, plans)
    assert "up to 29 records per partition may be read again (29 in all)" in text
    assert "here at most 202 records apart" in text
    below = mm2._plan(OffsetSyncStore(), "billing", "orders", 0, 5, "us-west.orders")
    assert below.downstream_offset is None and below.reread is None


def test_a_drain_on_mm2_records_names_the_partitions_mm2_has_no_position_for() -> None:
    measured = (DrainPartition("orders", 0, None, 500),)
    why = drain._why(None, 0, None, None, measured, "", by_mm2=True)
    assert why == "MirrorMaker 2 has committed no source position for orders-0 yet: does it replicate them?"
