"""OffsetSyncStore: exact translation of upstream consumer positions from offset syncs, or None, never a guess."""

from __future__ import annotations

import logging
from array import array
from bisect import bisect_left, bisect_right

from replication.config import FlowConfig
from replication.kafka.clients import ClientFactory
from replication.kafka.internaltopics import TopicTail, offset_syncs_cluster, offset_syncs_topic
from replication.mm2.records import OffsetSync, RecordFormatError
from replication.offsets.syncs import EPOCH_HEADER, EPOCH_START

log = logging.getLogger(__name__)


class _PartitionSyncs:
    """The live syncs of one source partition, sorted by upstream offset (two int64 arrays: 16 bytes a sync)."""

    __slots__ = ("downstream", "sparse", "starts", "upstream")

    def __init__(self) -> None:
        self.upstream = array("q")
        self.downstream = array("q")
        self.starts: set[int] = set()  # upstream offsets where an epoch starts: nothing interpolates across them
        self.sparse: set[int] = set()  # upstream offsets of syncs MirrorMaker 2 wrote: nothing interpolates after them

    def add(self, upstream: int, downstream: int, epoch_start: bool, sparse: bool = False) -> None:
        if epoch_start:
            self._truncate(upstream)
        i = bisect_left(self.upstream, upstream)
        if i < len(self.upstream) and self.upstream[i] == upstream:
            self.downstream[i] = downstream  # a later sync for the same position replaces a provisional one
        else:
            self.upstream.insert(i, upstream)
            self.downstream.insert(i, downstream)
        if epoch_start:
            self.starts.add(upstream)
        if sparse:
            self.sparse.add(upstream)
        else:
            self.sparse.discard(upstream)

    def _truncate(self, start: int) -> None:
        """A new epoch replaces everything at or after start; what came before keeps its exact value."""
        i = bisect_left(self.upstream, start)
        if i == len(self.upstream):
            return
        boundary = self.translate(start - 1) if i > 0 and self.upstream[i - 1] < start - 1 else None
        del self.upstream[i:]
        del self.downstream[i:]
        self.starts = {s for s in self.starts if s < start}
        self.sparse = {s for s in self.sparse if s < start}
        if boundary is not None:  # keeps the old epoch's last interval exact without its upper sync
            self.upstream.append(start - 1)
            self.downstream.append(boundary)

    def translate(self, position: int) -> int | None:
        up, down = self.upstream, self.downstream
        i = bisect_left(up, position)
        if i < len(up) and up[i] == position:
            return down[i]
        if i > 0 and up[i - 1] in self.sparse:
            # MirrorMaker 2's rule (OffsetSyncStore.translateDownstream): one past the copy of the sync below, so
            # nothing is skipped; the copies of the records between are read again.
            return down[i - 1] + 1 if i == len(up) or up[i] not in self.starts else None
        if i == 0 or i == len(up) or up[i] in self.starts:
            return None
        u1, d1, d2 = up[i - 1], down[i - 1], down[i]
        if d2 < d1:
            return None  # contradicting syncs (a rewrite half read): refuse rather than guess
        return min(d1 + position - u1, d2)


class OffsetSyncStore:
    """The offset syncs of one flow, per source topic-partition, answering `translate` exactly or not at all.

    Invariants (the emitter in `offsetsyncs` establishes them; its module docstring has the reasoning):
    1. A sync (u, d) states that upstream position u and downstream position d are equivalent: a consumer
       resuming at either reads the same record next, the copy of the first replicated record at or after u.
    2. Between neighbouring syncs (u1, d1) < (u2, d2) of one epoch, records were copied one for one from u1 to
       d1, d1 + 1, ... and then nothing was replicated until u2: f(p) = min(d1 + p - u1, d2) for u1 <= p < u2.
    3. A later sync for the same upstream offset replaces the earlier one (a rewritten provisional frontier).
    4. An epoch-start sync replaces every sync at or after its upstream offset; values before it are kept
       exactly, and nothing is interpolated across it.
    5. Below the first sync, above the last one, or across an epoch start, translate returns None.
    6. Syncs MirrorMaker 2 wrote (no `mirrorplane.offset-sync` header) promise only 1: past one, up to the next,
       a position translates to one past its copy, as MM2 translates them (nothing skipped, some records re-read).
    Memory: 16 bytes per sync, and the topic's retention bounds the number of syncs.
    """

    def __init__(self) -> None:
        self._partitions: dict[tuple[str, int], _PartitionSyncs] = {}

    def add(self, sync: OffsetSync, epoch_start: bool = False, sparse: bool = False) -> None:
        """`sparse`: a sync MirrorMaker 2 wrote, after which positions translate by its rule, not one for one."""
        key = (sync.topic, sync.partition)
        syncs = self._partitions.get(key)
        if syncs is None:
            syncs = self._partitions[key] = _PartitionSyncs()
        syncs.add(sync.upstream_offset, sync.downstream_offset, epoch_start, sparse)

    def translate(self, topic: str, partition: int, upstream_offset: int) -> int | None:
        """The downstream offset equivalent to the upstream committed offset, or None if no sync covers it."""
        syncs = self._partitions.get((topic, partition))
        return None if syncs is None else syncs.translate(upstream_offset)

    def coverage(self, topic: str, partition: int) -> tuple[int, int] | None:
        """The lowest and highest upstream offsets that syncs describe (gaps between epochs excepted)."""
        syncs = self._partitions.get((topic, partition))
        if syncs is None or not syncs.upstream:
            return None
        return syncs.upstream[0], syncs.upstream[-1]

    def by_mm2_rule(self, topic: str, partition: int, upstream_offset: int) -> bool:
        """Whether `translate` answers for this position by MirrorMaker 2's rule (invariant 6), not exactly."""
        syncs = self._partitions.get((topic, partition))
        if syncs is None:
            return False
        i = bisect_right(syncs.upstream, upstream_offset)
        return i > 0 and syncs.upstream[i - 1] in syncs.sparse and syncs.upstream[i - 1] != upstream_offset

    def floor(self, topic: str, partition: int, upstream_offset: int) -> tuple[int, int] | None:
        """The sync (upstream, downstream) with the greatest upstream offset at or below upstream_offset, or None."""
        syncs = self._partitions.get((topic, partition))
        if syncs is None:
            return None
        i = bisect_right(syncs.upstream, upstream_offset)
        return None if i == 0 else (syncs.upstream[i - 1], syncs.downstream[i - 1])

    def syncs(self, topic: str, partition: int) -> list[tuple[int, int]]:
        """Every live sync (upstream, downstream) of one partition, by upstream offset."""
        syncs = self._partitions.get((topic, partition))
        return [] if syncs is None else list(zip(syncs.upstream, syncs.downstream, strict=True))

    def __len__(self) -> int:
        return sum(len(s.upstream) for s in self._partitions.values())


class OffsetSyncReader:
    """Feeds an OffsetSyncStore from a flow's offset-syncs topic, incrementally."""

    def __init__(self, flow: FlowConfig, clients: ClientFactory | None = None) -> None:
        clients = clients or ClientFactory()
        self.topic = offset_syncs_topic(flow)
        consumer = clients.consumer(offset_syncs_cluster(flow), f"{flow.source.alias}-{flow.target.alias}-syncs")
        self.tail = TopicTail(consumer, self.topic)
        self.store = OffsetSyncStore()

    def update(self, timeout: float = 30.0) -> int:
        """Read the syncs written since the last update; returns how many."""
        records = self.tail.read_to_end(timeout)
        for msg in records:
            try:
                sync = OffsetSync.from_bytes(msg.key(), msg.value())
            except RecordFormatError as exc:
                log.warning("%s: skipping a malformed offset sync at offset %s: %s", self.topic, msg.offset(), exc)
                continue
            headers = msg.headers() or []
            ours = [header[1] for header in headers if header[0] == EPOCH_HEADER]
            self.store.add(sync, epoch_start=EPOCH_START in ours, sparse=not ours)
        return len(records)

    def close(self) -> None:
        self.tail.close()
