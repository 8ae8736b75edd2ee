"""Translating a position back to its origin by inverting offset syncs: exact where syncs cover it, else None."""

from __future__ import annotations

from replication.mm2.records import OffsetSync
from replication.offsets.syncstore import OffsetSyncStore
from replication.offsets.translation import upstream_position


def store(*syncs: tuple[int, int], epoch_start: int | None = None) -> OffsetSyncStore:
    s = OffsetSyncStore()
    for upstream, downstream in syncs:
        s.add(OffsetSync("orders", 0, upstream, downstream), epoch_start=upstream == epoch_start)
    return s


def test_a_copied_position_translates_back_to_its_upstream_offset() -> None:
    s = store((0, 0), (100, 100))  # records 0..99 copied one for one
    assert [upstream_position(s, "orders", 0, d) for d in (0, 1, 57, 100)] == [0, 1, 57, 100]


def test_a_gap_upstream_maps_to_the_first_position_after_the_last_copy() -> None:
    # upstream 10..19 not replicated (e.g. aborted): downstream 10 is the copy of upstream 20
    s = store((0, 0), (10, 10), (20, 10), (30, 20))
    assert upstream_position(s, "orders", 0, 10) == 10  # 10..20 are equivalent: nothing between is replicated
    assert upstream_position(s, "orders", 0, 11) == 21
    assert upstream_position(s, "orders", 0, 20) == 30


def test_positions_the_syncs_do_not_cover_are_refused() -> None:
    s = store((50, 0), (60, 10))
    assert upstream_position(s, "orders", 0, 11) is None  # beyond the frontier
    assert upstream_position(s, "orders", 0, 5) == 55
    assert upstream_position(s, "orders", 1, 5) is None  # no syncs for that partition
