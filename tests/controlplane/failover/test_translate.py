"""Translating a position back to its origin by inverting offset syncs (exact where syncs cover it, else None),
the order of steps, and apply's refusal to move offsets backwards."""

from __future__ import annotations

import pytest

from controlplane.failover.models import Failover
from controlplane.failover.services import kafka, offsets
from controlplane.failover.services.machine import next_step
from controlplane.failover.services.translate import upstream_position
from replication.offsetsyncstore import OffsetSyncStore
from replication.records import OffsetSync


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


def test_an_unplanned_failover_skips_the_drain() -> None:
    assert next_step(Failover(mode="unplanned"), "preflight") == "fence"
    assert next_step(Failover(mode="planned"), "preflight") == "drain"
    assert next_step(Failover(mode="planned"), "verify") == "failback"


def test_apply_names_every_offset_that_would_move_backwards(monkeypatch: pytest.MonkeyPatch) -> None:
    committed = {("us-west.orders", 0): 50, ("us-west.orders", 1): 5}
    monkeypatch.setattr(kafka, "committed", lambda client, group: committed)
    wanted = {"billing": {("us-west.orders", 0): 40, ("us-west.orders", 1): 9, ("us-west.orders", 2): 1}}
    assert offsets._backwards(None, wanted) == ["billing us-west.orders-0: 50 -> 40"]
