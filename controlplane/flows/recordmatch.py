"""Where the copy of a source record lies in the remote topic, from the flow's offset syncs, and whether the record
there is that copy.

Mirrorplane's offset syncs are exact one for one between neighbouring syncs of an epoch (``OffsetSyncStore``'s
invariant 2): the copy of upstream record u, if the flow copied it, is at ``translate(u)``; if ``translate(u + 1)``
is the same position, the flow dropped u (a filter or a record handler). MirrorMaker 2's syncs are sparse: only
at a sync is the position exact, past one the copy lies somewhere before the next sync's copy, and the record is
looked for there by its bytes. No sync for the position: nothing is guessed.

Pure: the store and the target's records come in; no Kafka, no Django.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from replication.mm2.records import PROVENANCE_HEADER
from replication.offsets.syncstore import OffsetSyncStore

EXACT = "exact"  # the syncs name the position, and the record there has the same key, value and headers
MATCHED = "matched"  # sparse syncs name a range, and one record in it has the same key, value and headers
RANGE = "range"  # sparse syncs name a range; the copy was not found among the records read of it
DIFFERENT = "different"  # the syncs name the position, but the record there is not a copy of this one
NOT_COPIED = "not_copied"  # the syncs say the flow dropped it
NOT_REPLICATED = "not_replicated"  # not replicated yet: past what the syncs (or the remote topic) reach
DELETED = "deleted"  # its copy's position is below the remote partition's log start
UNKNOWN = "unknown"  # no sync covers it
NO_RECORD = "no_record"  # the source partition has no record at that offset
Fingerprint = tuple[bytes | None, bytes | None, tuple[tuple[str, bytes | None], ...]]


@dataclass(frozen=True)
class Location:
    """Where the copy of one upstream record is: ``target_offset`` when known, else the range ``low..high``."""

    status: str
    reason: str
    target_offset: int | None = None
    low: int | None = None
    high: int | None = None

    def as_dict(self) -> dict[str, Any]:
        span = [self.low, self.high] if self.low is not None and self.high is not None else None
        return {"status": self.status, "target_offset": self.target_offset, "target_range": span, "reason": self.reason}


def fingerprint(key: bytes | None, value: bytes | None, headers: list[tuple[str, bytes | None]] | None) -> Fingerprint:
    """What a copy keeps of a record: key, value and headers, without the provenance header identity flows add."""
    kept = tuple((name, data) for name, data in headers or [] if name != PROVENANCE_HEADER)
    return key, value, kept


def candidate(store: OffsetSyncStore, topic: str, partition: int, offset: int, end: int) -> Location:
    """Where the syncs put the copy of upstream record ``offset`` (``end``: the remote partition's end offset).

    EXACT and MATCHED are only given by ``confirm`` once the record there is compared."""
    downstream = store.translate(topic, partition, offset)
    if downstream is None:
        return _uncovered(store.coverage(topic, partition), offset)
    if store.by_mm2_rule(topic, partition, offset):
        return _sparse(store, topic, partition, offset, end)
    if downstream >= end:
        return Location(NOT_REPLICATED, f"not replicated yet: its copy goes to downstream offset {downstream}")
    if store.translate(topic, partition, offset + 1) == downstream:
        reason = f"not copied: the offset syncs give upstream offsets {offset} and {offset + 1} the same position"
        return Location(NOT_COPIED, reason + f" {downstream} (the flow dropped it)")
    return Location(RANGE, "", downstream, downstream, downstream)


def _uncovered(coverage: tuple[int, int] | None, offset: int) -> Location:
    if coverage is None:
        return Location(UNKNOWN, "no offset syncs for this partition: not replicated yet, or its syncs expired")
    low, high = coverage
    if offset > high:
        return Location(NOT_REPLICATED, f"not replicated yet: the offset syncs reach upstream offset {high}")
    if offset < low:
        return Location(UNKNOWN, f"before the first offset sync (upstream offset {low}): no position is known")
    return Location(UNKNOWN, "between two epochs of offset syncs: no position is known")


def _sparse(store: OffsetSyncStore, topic: str, partition: int, offset: int, end: int) -> Location:
    """MirrorMaker 2's rule: past the sync (u, d) at or below, before the next one's copy (or the end)."""
    below = store.floor(topic, partition, offset)
    assert below is not None  # by_mm2_rule found it
    above = [d for u, d in store.syncs(topic, partition) if u > offset]
    low, high = below[1] + 1, (above[0] if above else end) - 1
    if low > high:
        return Location(NOT_REPLICATED, f"not replicated yet: its copy goes at or after downstream offset {low}")
    reason = (
        f"MirrorMaker 2's offset syncs are sparse: the copy is between downstream offsets {low} and {high} "
        f"(sync at upstream offset {below[0]})"
    )
    return Location(RANGE, reason, None, low, high)


def confirm(location: Location, wanted: Fingerprint, target: Mapping[int, Fingerprint], start: int) -> Location:
    """The candidate checked against the remote partition's records read (``target``: offset -> fingerprint);
    ``start`` is the remote partition's log start offset."""
    if location.status != RANGE or location.low is None or location.high is None:
        return location
    if location.target_offset is not None:
        return _at(location.target_offset, wanted, target, start)
    found = [o for o in range(max(location.low, start), location.high + 1) if target.get(o) == wanted]
    if len(found) == 1:
        reason = location.reason + "; the one record in it with the same key, value and headers"
        return Location(MATCHED, reason, found[0], location.low, location.high)
    if len(found) > 1:
        copies = ", ".join(map(str, found))
        return Location(RANGE, location.reason + f"; records with the same bytes at {copies}", None, *_span(location))
    if any(o not in target for o in range(max(location.low, start), location.high + 1)):
        return Location(RANGE, location.reason + "; not all of it was read", None, *_span(location))
    return Location(DIFFERENT, location.reason + "; no record in it has the same bytes", None, *_span(location))


def _at(offset: int, wanted: Fingerprint, target: Mapping[int, Fingerprint], start: int) -> Location:
    if offset < start:
        return Location(DELETED, f"its copy at downstream offset {offset} was deleted (log start {start})", offset)
    found = target.get(offset)
    if found is None:
        return Location(RANGE, f"the offset syncs put its copy at downstream offset {offset}, not read", offset)
    if found != wanted:
        reason = f"the record at downstream offset {offset} differs (a record handler changed it, or it was rewritten)"
        return Location(DIFFERENT, reason, offset)
    return Location(EXACT, "the offset syncs give its position; key, value and headers are the same", offset)


def _span(location: Location) -> tuple[int | None, int | None]:
    return location.low, location.high
