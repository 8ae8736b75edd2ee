"""OffsetTranslator: a source consumer group's committed offsets as offsets in the target, with how each was found.

Exact from offset syncs whenever they cover the offset. Otherwise (the group is ahead of replication, or its
position was never replicated) by record timestamp, as CDAP corrects offsets after a failover: the timestamp of
the first source record at or after the committed offset, looked up downstream with offsets_for_times. That is
approximate, so the result says so and names the window that may be re-read or skipped.

The other direction, for a failback: `upstream_position` takes a position in a remote topic back to its origin
by inverting the offset syncs of the flow that made the copy. It answers the smallest upstream position whose copy
is at or after the given one (equivalent: everything between is not replicated), or None. MM2 has no such
translation; it is what makes a failback as exact as the failover.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from confluent_kafka import Consumer, TopicPartition

from replication.config import FlowConfig
from replication.kafka.clients import ClientFactory
from replication.kafka.internaltopics import TopicTail, flow_checkpoints_topic
from replication.mm2.filters import TopicFilter
from replication.mm2.records import latest_checkpoints
from replication.offsets.checkpoints import group_offsets, read_checkpoints
from replication.offsets.syncstore import OffsetSyncReader, OffsetSyncStore

SYNC = "sync"
MM2_SYNC = "mm2-sync"  # MirrorMaker 2's offset syncs, by its rule: never ahead, some records read again
TIMESTAMP = "timestamp"
CHECKPOINT = "checkpoint"
LOOKUP_TIMEOUT = 10.0


@dataclass(frozen=True)
class Translation:
    """One partition of a consumer group translated across a flow; `window` explains an approximate result."""

    topic: str
    partition: int
    remote_topic: str
    upstream_offset: int
    downstream_offset: int
    method: str  # SYNC (exact), MM2_SYNC or TIMESTAMP (approximate)
    lag: int  # downstream records from the translated offset to the end of the remote partition
    window: str = ""

    @property
    def approximate(self) -> bool:
        return self.method in (TIMESTAMP, MM2_SYNC)


class OffsetTranslator:
    """Translates committed offsets of source groups for one flow (the CLI's `offsets translate`)."""

    def __init__(self, flow: FlowConfig, clients: ClientFactory | None = None) -> None:
        self.flow = flow
        self.clients = clients or ClientFactory()
        self.policy = flow.policy()
        self.syncs = OffsetSyncReader(flow, self.clients)
        self.source: Consumer = self.clients.consumer(flow.source, f"{flow.name}-translate")
        self.target: Consumer = self.clients.consumer(flow.target, f"{flow.name}-translate")
        self._synced = False

    def refresh(self) -> None:
        """Read the offset syncs written since the last refresh."""
        self.syncs.update()
        self._synced = True

    def translate_group(self, group: str) -> list[Translation]:
        admin = self.clients.admin(self.flow.source)
        offsets = group_offsets(admin, [group], TopicFilter(self.flow))
        self.refresh()
        return [
            self.translate(o.topic, o.partition, o.offset)
            for o in sorted(offsets, key=lambda o: (o.topic, o.partition))
        ]

    def translate(self, topic: str, partition: int, offset: int) -> Translation:
        if not self._synced:
            self.refresh()
        remote = self.policy.format_remote_topic(self.flow.source.alias, topic)
        end = self._end(remote, partition)
        store = self.syncs.store
        downstream = store.translate(topic, partition, offset)
        if downstream is not None and store.by_mm2_rule(topic, partition, offset):
            below = store.floor(topic, partition, offset)
            assert below is not None  # by_mm2_rule found it
            window = (
                f"MirrorMaker 2's offset syncs: one past the copy of upstream offset {below[0]}, the newest sync at or "
                f"below {offset}; the copies of upstream offsets {below[0] + 1}..{offset - 1} are read again"
            )
            return Translation(topic, partition, remote, offset, downstream, MM2_SYNC, max(end - downstream, 0), window)
        if downstream is not None:
            return Translation(topic, partition, remote, offset, downstream, SYNC, max(end - downstream, 0))
        return self._by_timestamp(topic, partition, remote, offset, end)

    def close(self) -> None:
        self.syncs.close()
        self.source.close()
        self.target.close()

    # -- the timestamp fallback ----------------------------------------------------------------------
    def _by_timestamp(self, topic: str, partition: int, remote: str, offset: int, end: int) -> Translation:
        timestamp = self._timestamp_at(topic, partition, offset)
        coverage = self.syncs.store.coverage(topic, partition)
        if timestamp is None:
            note = (
                f"the group is at the source end but replication has not confirmed reaching offset {offset}: "
                f"records still being replicated land at or after downstream offset {end} and would be re-read"
            )
            return Translation(topic, partition, remote, offset, end, TIMESTAMP, 0, note)
        downstream = self._offset_for_time(remote, partition, timestamp, end)
        same_time_end = self._offset_for_time(remote, partition, timestamp + 1, end)
        note = _window(offset, timestamp, downstream, same_time_end, coverage)
        return Translation(topic, partition, remote, offset, downstream, TIMESTAMP, max(end - downstream, 0), note)

    def _timestamp_at(self, topic: str, partition: int, offset: int) -> int | None:
        """Timestamp of the first (committed) source record at or after offset; None if there is none."""
        low, high = self.source.get_watermark_offsets(TopicPartition(topic, partition), timeout=LOOKUP_TIMEOUT)
        if offset >= high:
            return None
        self.source.assign([TopicPartition(topic, partition, max(offset, low))])
        try:
            for msg in self.source.consume(1, LOOKUP_TIMEOUT):
                if msg.error() is None:
                    return int(msg.timestamp()[1])
            return None
        finally:
            self.source.unassign()

    def _offset_for_time(self, remote: str, partition: int, timestamp: int, end: int) -> int:
        found = self.target.offsets_for_times([TopicPartition(remote, partition, timestamp)], LOOKUP_TIMEOUT)[0]
        return int(found.offset) if found.offset >= 0 else end

    def _end(self, remote: str, partition: int) -> int:
        return int(self.target.get_watermark_offsets(TopicPartition(remote, partition), timeout=LOOKUP_TIMEOUT)[1])


def from_checkpoints(flow: FlowConfig, group: str, clients: ClientFactory | None = None) -> list[Translation]:
    """The group's newest checkpoints from the flow's source in its target, as MM2's
    RemoteClusterUtils.translateOffsets reads them (whoever wrote them: Mirrorplane or MirrorMaker 2)."""
    clients = clients or ClientFactory()
    target = clients.consumer(flow.target, f"{flow.name}-translate")
    tail = TopicTail(clients.consumer(flow.target, f"{flow.name}-checkpoints"), flow_checkpoints_topic(flow))
    policy = flow.policy()
    try:
        newest = latest_checkpoints(read_checkpoints(tail)).get(group, {})
        rows = []
        for (remote, partition), cp in sorted(newest.items()):
            end = int(target.get_watermark_offsets(TopicPartition(remote, partition), timeout=LOOKUP_TIMEOUT)[1])
            topic = policy.upstream_topic(remote) or remote
            lag = max(end - cp.downstream_offset, 0)
            rows.append(
                Translation(topic, partition, remote, cp.upstream_offset, cp.downstream_offset, CHECKPOINT, lag)
            )
        return rows
    finally:
        tail.close()
        target.close()


def translate_downstream(store: OffsetSyncStore, topic: str, partition: int, offset: int) -> tuple[int, int] | None:
    """MM2's translation of offset syncs (its OffsetSyncStore.translateDownstream), as (downstream offset, upstream
    offset of the sync used), or None below the first sync.

    Offset syncs written by MirrorMaker 2 do not keep the one-for-one rule `OffsetSyncStore.translate` interpolates
    by (MM2 drops a sync still pending when a newer one comes, so a gap may lie between two syncs): only the sync
    at or below the position is trusted. At it, the position translates exactly; past it, to one past its copy, so
    nothing is skipped and the copies of the upstream records between are read again."""
    found = store.floor(topic, partition, offset)
    if found is None:
        return None
    upstream, downstream = found
    return (downstream if upstream == offset else downstream + 1), upstream


def _window(offset: int, timestamp: int, downstream: int, same_time_end: int, coverage: tuple[int, int] | None) -> str:
    """What resuming at downstream may re-read or skip, in words."""
    notes = [f"approximate: located by timestamp {timestamp} of upstream offset {offset}"]
    if same_time_end - downstream > 1:
        notes.append(
            f"downstream offsets {downstream}..{same_time_end - 1} share that timestamp: up to "
            f"{same_time_end - downstream - 1} records before the copy may be re-read"
        )
    notes.append("records before it with later timestamps (out of order) would be re-read")
    if coverage is None:
        notes.append("no offset syncs for this partition: its replication may not have started")
    elif offset < coverage[0]:
        notes.append(f"upstream offsets {offset}..{coverage[0] - 1} precede replication and are skipped")
    elif offset > coverage[1]:
        notes.append(
            f"the group is ahead of replication (offset syncs reach upstream offset {coverage[1]}): records from "
            f"there are still being replicated and may be re-read"
        )
    return "; ".join(notes)


# -- back to the origin: offset syncs inverted ----------------------------------------------------------------
_PROBE = 1000  # positions scanned around an epoch boundary, where syncs do not interpolate


def upstream_position(store: OffsetSyncStore, topic: str, partition: int, downstream: int) -> int | None:
    """The smallest upstream position whose copy is at or after ``downstream`` (f is non-decreasing), or None when
    the syncs do not reach that far or the position precedes the first sync."""
    coverage = store.coverage(topic, partition)
    if coverage is None:
        return None
    lo, hi = coverage

    def f(position: int) -> int | None:
        return store.translate(topic, partition, position)

    top, bottom = f(hi), f(lo)
    if top is None or bottom is None or top < downstream or bottom > downstream:
        return None
    if bottom == downstream:
        return lo
    # Invariant: f(lo) < downstream <= f(hi).
    while hi - lo > 1:
        mid = (lo + hi) // 2
        value = _defined(f, mid, lo, hi)
        if value is None:
            return None
        position, result = value
        if result < downstream:
            lo = position
        else:
            hi = position
    return hi


def _defined(f: Callable[[int], int | None], mid: int, lo: int, hi: int) -> tuple[int, int] | None:
    """f at mid, or at the nearest position inside (lo, hi) where syncs answer (they do not across epochs)."""
    for step in range(_PROBE):
        for position in (mid - step, mid + step):
            if lo < position < hi:
                value = f(position)
                if value is not None:
                    return position, value
    return None
