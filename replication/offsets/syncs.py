"""Offset syncs: how a replication task records, exactly, where each replicated upstream position is downstream.

Positions, not records. A consumer *position* is the next offset it will read. Upstream position p and downstream
position f(p) are equivalent when a consumer resuming at either reads the same record next: the downstream copy of
the first replicated upstream record at or after p. For a replicated record, f(u) is its copy's offset; in a gap
(compacted or filtered records, transaction markers, aborted records) f is flat at the copy of the next record.

An offset sync (u, d) states f(u) = d. Between two syncs (u1, d1) < (u2, d2) of one epoch (one task instance)
readers assume f(p) = min(d1 + p - u1, d2): records copied one for one from (u1, d1), then flat. That holds when
the downstream offsets continue without a gap, or when the flat part is empty; so at every break between two
consecutive copies (u_a, d_a) -> (u_b, d_b) the emitter writes:
- (u_b, d_b), the first record after the break, and
- (u_a + 1, d_b) as well when both sides have a gap (e.g. a source marker meeting a target transaction marker).

At each commit it also writes the *frontier* (F, n): F is the next upstream position (everything before it is
replicated or deliberately not), n the next downstream offset (after the commit marker in exactly-once mode). A
frontier is provisional: if the next copy lands elsewhere (an aborted transaction in between), it is rewritten;
a later sync for the same upstream offset replaces the earlier one. The first sync of a partition in an epoch
carries the header `mirrorplane.offset-sync: epoch-start`: from its upstream offset on, the new epoch replaces
what earlier epochs said (after a restart records may be replicated again, to new downstream offsets).
`offsetsyncstore.OffsetSyncStore` reads them back.

A sync that cannot be written (the topic's cluster unreachable, a full queue, a failed delivery) must not leave a
hole that readers would interpolate across: the producer is gapless (a failure fails everything after it), and
after any failure the emitter drops what it had not written and starts a new epoch at the next copy.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from confluent_kafka import KafkaError, KafkaException, Message, Producer, TopicPartition

from replication.config import FlowConfig
from replication.kafka.clients import ClientFactory
from replication.kafka.internaltopics import (
    OFFSET_SYNCS_CONFIG,
    OFFSET_SYNCS_RETENTION_MS,
    ensure_topic,
    offset_syncs_cluster,
    offset_syncs_topic,
)
from replication.mm2.records import OffsetSync
from replication.offsets.partitionstate import PartitionState, Run, Sweep

log = logging.getLogger(__name__)
EPOCH_HEADER = "mirrorplane.offset-sync"
EPOCH_START = b"epoch-start"
# Every other sync Mirrorplane writes: the one-for-one rule between it and the next holds. MirrorMaker 2's syncs carry
# no such header; between them that rule does not hold (it drops a sync still pending when a newer one comes).
ONE_FOR_ONE = b"one-for-one"
Sync = tuple[int, int, bool]  # upstream, downstream, starts an epoch
Positions = Callable[[list[TopicPartition]], list[TopicPartition]]


def stretches(run: Run, downstream: int) -> Iterator[tuple[int, int, int]]:
    """(first upstream, first downstream, count) of each stretch of consecutive upstream offsets in a run.

    A run's copies are consecutive downstream (one producer, one partition, one transaction), so the upstream
    side alone splits it.
    """
    first_down = downstream - run.count + 1
    up = run.upstream
    if up is None:
        yield run.first_offset, first_down, run.count
        return
    if up[-1] - up[0] == len(up) - 1:  # produced offsets only increase, so this means no gap
        yield up[0], first_down, len(up)
        return
    start = 0
    for i in range(1, len(up)):
        if up[i] != up[i - 1] + 1:
            yield up[start], first_down + start, i - start
            start = i
    yield up[start], first_down + start, len(up) - start


@dataclass(slots=True)
class PartitionSyncs:
    """What the syncs of one source partition have said in this epoch: the last copy and the provisional syncs."""

    state: PartitionState
    from_position: bool = True  # the epoch starts at the task's stored position (false after a lost sync)
    last_upstream: int = -1  # upstream offset of the last copy; -1 before the first copy of the epoch
    last_downstream: int = -1
    provisional: dict[int, int] = field(default_factory=dict)  # syncs written past the last copy
    frontier_written: float = 0.0  # clock time the frontier was last written
    # The source end offset that a sweep found the partition's position at (-1: not there). Its position cannot pass
    # the end offset, so until the end offset moves (the task's sweep reads it) a sweep has nothing to look at.
    settled_hw: int = -1

    def copy(self) -> PartitionSyncs:
        return PartitionSyncs(
            self.state,
            self.from_position,
            self.last_upstream,
            self.last_downstream,
            dict(self.provisional),
            self.frontier_written,
            self.settled_hw,
        )

    def stretch(self, upstream: int, downstream: int, count: int) -> list[Sync]:
        """The syncs that copying `count` records from upstream to downstream makes necessary."""
        if self.last_upstream < 0 or upstream <= self.last_upstream:
            syncs = self._epoch_start(upstream, downstream)
        elif self._continues(upstream, downstream):
            syncs = []
        else:
            syncs = self._break(upstream, downstream)
        self.provisional.clear()
        self.last_upstream, self.last_downstream = upstream + count - 1, downstream + count - 1
        return syncs

    def frontier(self, next_upstream: int, marker: int) -> list[Sync]:
        """Provisional syncs for the positions after the last copy; marker is 1 if a commit marker follows it."""
        if self.last_upstream < 0 or next_upstream <= self.last_upstream:
            return []
        after = self.last_downstream + 1 + marker
        wanted = {next_upstream: after}
        if next_upstream > self.last_upstream + 1 and marker:
            wanted[self.last_upstream + 1] = after  # a flat part after a downstream gap needs its own start
        syncs = self._new(wanted)
        self.provisional.update(wanted)
        return syncs

    def _epoch_start(self, upstream: int, downstream: int) -> list[Sync]:
        # The epoch starts where the task started reading: everything between that position and the first copy
        # was consumed and not replicated, so it maps to the first copy too. A restarted epoch knows no such thing.
        fresh = self.last_upstream < 0 and self.from_position
        start = min(self.state.stored_next, upstream) if fresh else upstream
        syncs: list[Sync] = [(start, downstream, True)]
        if upstream > start:
            syncs.append((upstream, downstream, False))
        return syncs

    def _continues(self, upstream: int, downstream: int) -> bool:
        consecutive = upstream == self.last_upstream + 1 and downstream == self.last_downstream + 1
        return consecutive and all(d == downstream for d in self.provisional.values())

    def _break(self, upstream: int, downstream: int) -> list[Sync]:
        wanted = {u: downstream for u in self.provisional if u <= upstream}  # rewrite what proved wrong
        if upstream > self.last_upstream + 1 and downstream > self.last_downstream + 1:
            wanted[self.last_upstream + 1] = downstream
        wanted[upstream] = downstream
        return self._new(wanted)

    def _new(self, wanted: dict[int, int]) -> list[Sync]:
        return [(u, d, False) for u, d in sorted(wanted.items()) if self.provisional.get(u) != d]


class OffsetSyncEmitter:
    """The task listener that writes offset syncs for what the task made durable (see the module docstring).

    Syncs of acknowledged runs are buffered and written on `committed()`; `aborted()` drops them and restores the
    state of the last commit (exactly-once). Written with an idempotent, non-transactional producer to partition 0.
    """

    def __init__(
        self,
        flow: FlowConfig,
        positions: Positions | None = None,
        clients: ClientFactory | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.flow = flow
        self.topic = offset_syncs_topic(flow)
        self.positions = positions  # the task consumer's position(): it skips markers that acked_next cannot
        self.clients = clients or ClientFactory()
        self.clock = clock
        self.marker = 1 if flow.exactly_once else 0
        self.rewrite_after = OFFSET_SYNCS_RETENTION_MS / 1000 / 4  # an idle partition's frontier outlives retention
        self.partitions: dict[tuple[str, int], PartitionSyncs] = {}
        # A commit looks at the partitions acknowledged since their last frontier, and at all of them once per
        # sweep: an idle partition's position moves only over source transaction markers, and a frontier is
        # provisional, so a few seconds' delay there costs no exactness.
        self.sweep: Sweep[tuple[str, int]] = Sweep()
        self.pending: list[tuple[str, int, Sync]] = []
        self.written = 0
        self._saved: dict[tuple[str, int], PartitionSyncs | None] = {}  # exactly-once: state at the last commit
        self._producer: Producer | None = None
        self._failed: str | None = None  # why syncs were lost; the next commit starts a new epoch
        self._fatal = False  # the producer delivers nothing more
        self._restarted = False

    # -- TaskListener --------------------------------------------------------------------------------
    def run_acked(self, run: Run, downstream: int) -> None:
        key = (run.state.topic, run.state.partition)
        syncs = self.partitions.get(key)
        if self.marker and key not in self._saved:
            self._saved[key] = None if syncs is None else syncs.copy()
        if syncs is None:
            syncs = self.partitions[key] = PartitionSyncs(run.state, from_position=not self._restarted)
        self.sweep.moved.add(key)
        for upstream, first_down, count in stretches(run, downstream):
            self.pending.extend((key[0], key[1], sync) for sync in syncs.stretch(upstream, first_down, count))

    def committed(self) -> None:
        if self._producer is not None:
            self._producer.poll(0)  # serves delivery reports: a failure found here restarts the epoch now
        if self._failed is not None:
            self._restart_epoch()
            return
        self._frontiers()
        self._saved.clear()
        if self.pending:
            self._write(self.pending)
            self.pending = []

    def aborted(self) -> None:
        self.pending = []
        for key, saved in self._saved.items():
            if saved is None:
                self.partitions.pop(key, None)
            else:
                self.partitions[key] = saved
        self._saved.clear()

    def close(self) -> None:
        if self._producer is not None:
            remaining = self._producer.flush(30)
            if remaining:
                log.warning("%s: %d offset syncs not delivered at close", self.flow.name, remaining)

    # -- internals -----------------------------------------------------------------------------------
    def _frontiers(self) -> None:
        now = self.clock()
        keys = self.sweep.pick(now, lambda: self._unsettled(now))
        looked_at = {key: self.partitions[key] for key in keys if key in self.partitions}
        next_positions = self._next_positions(looked_at)
        # Until it is idle at a commit, a partition's position may still pass markers the runs do not show.
        self.sweep.moved = {key for key, syncs in looked_at.items() if syncs.state.acknowledging}
        for key, syncs in looked_at.items():
            state = syncs.state
            next_upstream = next_positions.get(key, state.acked_next)
            settled = state.hw >= 0 and next_upstream >= state.hw and not state.acknowledging
            syncs.settled_hw = state.hw if settled else -1
            frontier = syncs.frontier(next_upstream, self.marker)
            if not frontier and now - syncs.frontier_written >= self.rewrite_after:
                frontier = [(u, d, False) for u, d in sorted(syncs.provisional.items())]  # before retention ends
            if frontier:
                syncs.frontier_written = now
                self.pending.extend((key[0], key[1], sync) for sync in frontier)

    def _unsettled(self, now: float) -> list[tuple[str, int]]:
        """What a sweep looks at: every partition but those settled at an unchanged source end offset, whose frontier
        is not due for its rewrite. At 2,500 idle partitions per task, asking each one's position and frontier every
        sweep was the largest part of an idle control plane worker's Python (`bench.worker_idle --py-spy`)."""
        moved, due = self.sweep.moved, now - self.rewrite_after
        return [
            key
            for key, syncs in self.partitions.items()
            if syncs.settled_hw < 0
            or syncs.settled_hw != syncs.state.hw
            or key in moved
            or (syncs.provisional and syncs.frontier_written <= due)
        ]

    def _next_positions(self, partitions: dict[tuple[str, int], PartitionSyncs]) -> dict[tuple[str, int], int]:
        """Where each partition's replication stands: past the markers too, once nothing is in flight."""
        idle = [s.state for s in partitions.values() if not s.state.acknowledging]
        if self.positions is None or not idle:
            return {}
        result = {}
        for tp in self.positions([TopicPartition(s.topic, s.partition) for s in idle]):
            key = (tp.topic, tp.partition)
            if tp.error is None and tp.offset >= 0 and key in partitions:
                result[key] = max(tp.offset, partitions[key].state.acked_next)
        return result

    def _write(self, syncs: list[tuple[str, int, Sync]]) -> None:
        try:
            # Not `self._producer or ...`: a producer with an empty queue has len() 0 and is falsy.
            producer = self._start() if self._producer is None else self._producer
            for topic, partition, (upstream, downstream, epoch_start) in syncs:
                key, value = OffsetSync(topic, partition, upstream, downstream).to_bytes()
                mark = EPOCH_START if epoch_start else ONE_FOR_ONE
                headers: list[tuple[str, str | bytes | None]] = [(EPOCH_HEADER, mark)]
                producer.produce(self.topic, value, key, 0, on_delivery=self._delivered, headers=headers)
            producer.poll(0)
        except (BufferError, KafkaException) as exc:  # replication goes on; translation restarts after the gap
            self._failed = f"not written: {exc}"
            self._restart_epoch()
            return
        self.written += len(syncs)

    def _restart_epoch(self) -> None:
        log.warning(
            "%s: offset syncs %s; positions replicated until the next copy of each partition cannot be translated "
            "exactly (readers refuse them, never guess)",
            self.flow.name,
            self._failed,
        )
        if self._fatal:
            self._producer, self._fatal = None, False  # the next write starts a new producer
        self.partitions.clear()
        self._saved.clear()
        self.pending = []
        self._failed = None
        self._restarted = True

    def _start(self) -> Producer:
        cluster = offset_syncs_cluster(self.flow)
        ensure_topic(self.clients.admin(cluster), self.topic, OFFSET_SYNCS_CONFIG)
        self._producer = self.clients.producer(cluster, error_cb=self._error)
        return self._producer

    def _delivered(self, err: KafkaError | None, msg: Message) -> None:
        if err is not None:
            self._failed = self._failed or f"lost ({self.topic}: {err.str()})"

    def _error(self, err: KafkaError) -> None:
        if err.fatal():
            self._failed, self._fatal = f"lost: fatal producer error ({err.str()})", True
