"""MM2's translation of offset syncs (OffsetSyncStore.translateDownstream): exact at a sync, one past the copy of
the sync at or below otherwise, nothing below the first sync; never interpolated between sparse syncs."""

from __future__ import annotations

from replication.mm2.records import OffsetSync
from replication.offsets.syncstore import OffsetSyncStore
from replication.offsets.translation import translate_downstream


def _store(*syncs: tuple[int, int]) -> OffsetSyncStore:
    store = OffsetSyncStore()
    for upstream, downstream in syncs:
        store.add(OffsetSync("orders", 0, upstream, downstream))
    return store


def test_a_position_at_a_sync_translates_exactly() -> None:
    assert translate_downstream(_store((0, 0), (101, 90), (202, 180)), "orders", 0, 101) == (90, 101)


def test_a_position_between_syncs_resumes_one_past_the_copy_of_the_sync_below() -> None:
    store = _store((0, 0), (101, 90), (202, 180))
    assert translate_downstream(store, "orders", 0, 150) == (91, 101)  # interpolating would say 139
    assert store.translate("orders", 0, 150) == 139
    assert translate_downstream(store, "orders", 0, 999) == (181, 202)  # past the last sync: the same rule


def test_nothing_translates_below_the_first_sync_or_on_an_unknown_partition() -> None:
    store = _store((50, 40))
    assert translate_downstream(store, "orders", 0, 49) is None
    assert translate_downstream(store, "orders", 1, 60) is None
    assert store.syncs("orders", 0) == [(50, 40)] and store.syncs("orders", 1) == []
