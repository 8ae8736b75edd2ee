"""Where a source record's copy is, from offset syncs alone (no Kafka): exact one-for-one syncs, a record the flow
dropped, MirrorMaker 2's sparse syncs answered with a range or a match by bytes, and no sync at all."""

from __future__ import annotations

from controlplane.flows.recordmatch import (
    DIFFERENT,
    EXACT,
    MATCHED,
    NOT_COPIED,
    NOT_REPLICATED,
    RANGE,
    UNKNOWN,
    Location,
    candidate,
    confirm,
    fingerprint,
)
from replication.mm2.records import PROVENANCE_HEADER, OffsetSync
from replication.offsets.syncstore import OffsetSyncStore

T = "orders"


def store(*syncs: tuple[int, int], sparse: bool = False) -> OffsetSyncStore:
    found = OffsetSyncStore()
    for upstream, downstream in syncs:
        found.add(OffsetSync(T, 0, upstream, downstream), sparse=sparse)
    return found


def record(i: int) -> tuple[bytes | None, bytes | None, tuple[tuple[str, bytes | None], ...]]:
    return fingerprint(f"k{i}".encode(), f"v{i}".encode(), [("h", b"x")])


def test_exact_syncs_name_the_copy_and_its_bytes_confirm_it() -> None:
    syncs = store((0, 100), (10, 110))
    location = candidate(syncs, T, 0, 4, end=110)
    assert (location.target_offset, location.status) == (104, RANGE)
    confirmed = confirm(location, record(4), {104: record(4)}, start=0)
    assert (confirmed.status, confirmed.target_offset) == (EXACT, 104)
    assert confirm(location, record(4), {104: record(5)}, start=0).status == DIFFERENT


def test_a_copy_keeps_its_bytes_whatever_provenance_header_an_identity_flow_adds() -> None:
    copy = fingerprint(b"k", b"v", [("h", b"x"), (PROVENANCE_HEADER, b"us-west")])
    assert copy == fingerprint(b"k", b"v", [("h", b"x")])


def test_a_record_the_flow_dropped_shares_its_position_with_the_next() -> None:
    # Upstream 0..4 copied to 100..104, 5..9 dropped (a filter), then 10 copied to 105.
    syncs = store((0, 100), (5, 105), (10, 105))
    assert candidate(syncs, T, 0, 7, end=106).status == NOT_COPIED
    assert candidate(syncs, T, 0, 4, end=106).target_offset == 104


def test_mm2_sparse_syncs_give_a_range_and_a_unique_match_by_bytes_names_the_copy() -> None:
    syncs = store((0, 50), (20, 75), sparse=True)
    location = candidate(syncs, T, 0, 7, end=80)
    assert (location.status, location.low, location.high, location.target_offset) == (RANGE, 51, 74, None)
    target = {o: record(o - 50 + 1000) for o in range(51, 75)} | {62: record(7)}
    matched = confirm(location, record(7), target, start=0)
    assert (matched.status, matched.target_offset) == (MATCHED, 62)
    assert matched.as_dict()["target_range"] == [51, 74]
    unread = confirm(location, record(7), {o: v for o, v in target.items() if o != 62 and o < 60}, start=0)
    assert (unread.status, unread.target_offset) == (RANGE, None)
    at_sync = candidate(syncs, T, 0, 20, end=80)
    assert (at_sync.target_offset, confirm(at_sync, record(20), {75: record(20)}, 0).status) == (75, EXACT)


def test_without_a_sync_nothing_is_guessed() -> None:
    assert candidate(OffsetSyncStore(), T, 0, 3, end=10).status == UNKNOWN
    syncs = store((5, 100), (10, 105))
    assert candidate(syncs, T, 0, 2, end=106).status == UNKNOWN
    ahead = candidate(syncs, T, 0, 12, end=106)
    assert (ahead.status, ahead.reason) == (
        NOT_REPLICATED,
        "not replicated yet: the offset syncs reach upstream offset 10",
    )
    beyond_end = candidate(store((0, 100), (10, 110)), T, 0, 9, end=105)
    assert beyond_end == Location(NOT_REPLICATED, "not replicated yet: its copy goes to downstream offset 109")
