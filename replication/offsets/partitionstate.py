"""Per-partition bookkeeping of a replication task: runs of records and the positions they make safe.

A *run* is a stretch of consecutive records of one partition within a consumed batch. Only the last record of
a run carries a delivery callback: the idempotent, gap-less producer delivers a partition's records in order
and fails fatally rather than leave a gap, so that one acknowledgement covers the whole run (KIP-3's unacked
list, kept per run instead of per record).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

K = TypeVar("K", bound=Hashable)
SWEEP_SECONDS = 5.0
# A settled partition (position stored at the source end offset last seen) moves without a consumed record only when
# the source appends transaction markers alone (an aborted transaction): its cached end offset is read this often.
SETTLED_SWEEP_SECONDS = 30.0


@dataclass(slots=True, eq=False)
class PartitionState:
    """Progress of one source partition: what is acknowledged by the target, stored, and in flight."""

    topic: str
    partition: int
    remote_topic: str
    acked_next: int  # every upstream offset below this is acknowledged by the target (or deliberately dropped)
    stored_next: int  # the position last written to the position store
    hw: int = -1  # source end offset last seen
    inflight: int = 0  # runs produced but not yet acknowledged
    pending_next: int | None = None  # position of a fully filtered run, safe once inflight reaches 0
    last_downstream: int = -1  # downstream offset of the last acknowledged record (-1: none in this task instance)
    fetched_next: int = -1  # next offset the consumer will return, as of the last run built (-1: none yet)
    downstream_start: int = -1  # target end offset when the task took the partition (-1: not known)
    lag: int = -1  # records behind the source end offset, as last given to the metrics (-1: not yet)

    def run_acked(self, next_offset: int, downstream: int) -> None:
        self.inflight -= 1
        self.acked_next = max(self.acked_next, next_offset)
        self.last_downstream = downstream
        if self.inflight == 0 and self.pending_next is not None:
            self.acked_next = max(self.acked_next, self.pending_next)
            self.pending_next = None

    @property
    def acknowledging(self) -> bool:
        """Runs of the partition still await their acknowledgement: acked_next may still move."""
        return self.inflight > 0 or self.pending_next is not None

    def downstream_next(self) -> int | None:
        """The target offset after this task's last acknowledged record: stored with the position (at least once).

        Before the first acknowledgement it is the target's end offset at start, which no record of this task
        precedes unverified (replication.task.resume). None when neither is known.
        """
        if self.last_downstream >= 0:
            return max(self.last_downstream + 1, self.downstream_start)
        return self.downstream_start if self.downstream_start >= 0 else None

    def filtered_run(self, next_offset: int) -> None:
        """A run whose records were all dropped by the record handler: safe as soon as nothing is in flight."""
        if self.inflight == 0:
            self.acked_next = max(self.acked_next, next_offset)
        else:
            self.pending_next = next_offset


@dataclass(slots=True)
class Sweep(Generic[K]):
    """Which partitions a periodic pass over a task's partitions looks at: those marked `moved` since the last pass,
    and every partition once per `interval` (what moves without a consumed record: a lag over source transaction
    markers, a position past them). At 2,500 idle partitions a pass over all of them each second cost 7 ms of a
    task's CPU (bench/README.md, idle CPU)."""

    interval: float = SWEEP_SECONDS
    moved: set[K] = field(default_factory=set)
    next_at: float = 0.0

    def pick(self, now: float, everything: Callable[[], Iterable[K]]) -> list[K]:
        if now < self.next_at:
            return list(self.moved)
        self.next_at = now + self.interval
        return list(everything())


@dataclass(slots=True, eq=False)
class Run:
    """Consecutive records of one partition, produced together; `upstream` lists offsets only if there are gaps."""

    state: PartitionState
    first_offset: int
    last_offset: int
    count: int  # records produced (after the record handler)
    nbytes: int
    last_timestamp: int
    consumed_ms: float
    upstream: list[int] | None = field(default=None)  # produced upstream offsets, when not contiguous
    first_timestamp: int = -1  # record timestamp of the first record
    # Where the consumer was positioned before this run: offsets in [fetched_from, first_offset) were skipped by
    # the consumer itself (transaction markers, compaction, aborted or dropped records), not lost.
    fetched_from: int = -1

    @property
    def next_offset(self) -> int:
        return self.last_offset + 1


class TaskListener(Protocol):
    """Observes what a task made durable, e.g. the offset-sync emitter.

    `run_acked` reports each run with the downstream offset of its last record as it is acknowledged. In
    exactly-once mode those offsets become real only when the transaction commits: listeners buffer runs and
    act on `committed()`, and drop them on `aborted()`. At least once, `committed()` follows each position store.
    """

    def run_acked(self, run: Run, downstream: int) -> None: ...
    def committed(self) -> None: ...
    def aborted(self) -> None: ...


class TaskListeners:
    """A task's listeners as one TaskListener, told in the order given (built once, at the task's start)."""

    def __init__(self, listeners: Sequence[TaskListener]) -> None:
        self.listeners = tuple(listeners)

    def run_acked(self, run: Run, downstream: int) -> None:
        for listener in self.listeners:
            listener.run_acked(run, downstream)

    def committed(self) -> None:
        for listener in self.listeners:
            listener.committed()

    def aborted(self) -> None:
        for listener in self.listeners:
            listener.aborted()
