"""Per-process replication metrics: the engine records them, the control plane and Prometheus read them.

Names follow MM2's `MirrorSourceConnector` metrics (`record-count`, `byte-count`, `replication-latency-ms`,
`record-age-ms`), plus what MM2 lacks: `replication-record-lag` (source end offset minus replicated position) and
`record-lost-count` (records that can no longer be replicated: a retention gap, a recreated topic), and what a
restart found at the target (`resume-skipped-count`: records a crashed task had written and its restart did not
write again; `resume-mismatch-count`: restarts that could not verify the target's records, see replication.task.resume).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypedDict

from replication.metrics.distribution import WINDOW_SAMPLES, WINDOW_SECONDS, Distribution
from replication.metrics.prometheus import render_prometheus

# The snapshot's shape, in MM2's metric names (hence the functional TypedDict syntax for the hyphenated keys). A
# distribution is {"min", "max", "avg", "p50", "p95", "p99": over the window, None while it is empty; "sum",
# "count": cumulative}.
TaskSnapshot = TypedDict(
    "TaskSnapshot",
    {
        "state": str,  # RUNNING, FAILED, ...
        "error": str | None,  # why it failed
        "fault": str | None,  # a lasting condition (a broker unreachable), until cleared
        "fault-since": float | None,  # epoch seconds of its first report since the last clear
        "warning": str | None,  # a configuration problem that leaves the task healthy (a filter matching nothing)
    },
)
PartitionSnapshot = TypedDict(
    "PartitionSnapshot",
    {
        "topic": str,
        "partition": int,
        "record-count": int,
        "byte-count": int,
        "replication-latency-ms": dict[str, float | None],  # source record timestamp to target ack
        "record-age-ms": dict[str, float | None],  # age of a record when the task consumed it
        "replication-record-lag": int | None,  # source end offset minus replicated position; None until set
        "position": int | None,  # next source offset to replicate; None until set
        "record-lost-count": int,
        "last-loss-reason": str | None,
        "resume-skipped-count": int,  # records found already on the target at a start, so not sent again
        "resume-mismatch-count": int,  # starts whose target records could not all be verified (copied again)
        "last-resume-mismatch": str | None,
    },
)


class FlowSnapshot(TypedDict):
    tasks: dict[str, TaskSnapshot]  # by task id
    partitions: dict[str, PartitionSnapshot]  # by "topic-partition"


class Snapshot(TypedDict):
    flows: dict[str, FlowSnapshot]  # by flow name


@dataclass
class PartitionMetrics:
    """What one flow knows about one source topic-partition."""

    latency: Distribution
    age: Distribution
    record_count: int = 0
    byte_count: int = 0
    lag: int | None = None
    position: int | None = None
    lost: int = 0
    last_loss_reason: str | None = None
    resume_skipped: int = 0
    resume_mismatches: int = 0
    last_resume_mismatch: str | None = None
    # The last snapshot, kept while it cannot change: taken with both windows empty, and no write since (a writer
    # drops it). An idle task of 2,500 partitions then reports every few seconds without rebuilding each one.
    idle_snapshot: PartitionSnapshot | None = field(default=None, repr=False, compare=False)


@dataclass
class TaskStatus:
    """A task's state (`RUNNING`, `FAILED`, ...), its error if it failed, and a lasting fault if one is reported."""

    state: str = "UNASSIGNED"
    error: str | None = None
    fault: str | None = None
    fault_since: float | None = None  # epoch seconds of the first report since the last clear
    warning: str | None = None  # e.g. the topic filter matches no source topic; not a fault: health ignores it


@dataclass
class FlowMetrics:
    tasks: dict[int, TaskStatus] = field(default_factory=dict)
    partitions: dict[tuple[str, int], PartitionMetrics] = field(default_factory=dict)
    # The flow's last snapshot while nothing changed and every partition's is idle: handed out again as the same
    # object, so a reporter knows it unchanged without looking at 2,500 partitions (each lease renewal).
    idle_snapshot: FlowSnapshot | None = field(default=None, repr=False, compare=False)


class MetricsRegistry:
    """The metrics of every flow in this process, behind one lock.

    The engine calls it once per partition batch, never per record. `snapshot()` is a `Snapshot`::

        {"flows": {flow: {
            "tasks": {"0": {"state": "RUNNING", "error": None, "fault": None, "fault-since": None, "warning": None}},
            "partitions": {"orders-3": {
                "topic": "orders", "partition": 3, "record-count": 10, "byte-count": 512,
                "replication-latency-ms": {"min", "max", "avg", "p50", "p95", "p99",  # over the window; None if idle
                                           "sum", "count"},  # cumulative, count in records
                "record-age-ms": {...same keys...},
                "replication-record-lag": 0, "position": 1500,  # None until first set
                "record-lost-count": 0, "last-loss-reason": None,
                "resume-skipped-count": 0, "resume-mismatch-count": 0, "last-resume-mismatch": None}}}}}
    """

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        window_seconds: float = WINDOW_SECONDS,
        window_samples: int = WINDOW_SAMPLES,
    ) -> None:
        self._clock = clock
        self._wall_clock = wall_clock
        self._window = (window_seconds, window_samples)
        self._lock = threading.Lock()
        self._flows: dict[str, FlowMetrics] = {}

    # Called by the writers below only: each drops the flow's idle snapshot.
    def _partition(self, flow: str, topic: str, partition: int) -> PartitionMetrics:
        flow_metrics = self._flows.setdefault(flow, FlowMetrics())
        flow_metrics.idle_snapshot = None
        partitions = flow_metrics.partitions
        metrics = partitions.get((topic, partition))
        if metrics is None:
            metrics = partitions[topic, partition] = PartitionMetrics(
                Distribution(*self._window), Distribution(*self._window)
            )
        return metrics

    def _task(self, flow: str, task: int) -> TaskStatus:
        flow_metrics = self._flows.setdefault(flow, FlowMetrics())
        flow_metrics.idle_snapshot = None
        return flow_metrics.tasks.setdefault(task, TaskStatus())

    # -- written by the engine --------------------------------------------------------------------------------
    def record_batch(
        self,
        flow: str,
        topic: str,
        partition: int,
        count: int,
        nbytes: int,
        replication_latency_ms: float,
        record_age_ms: float,
    ) -> None:
        """Count a replicated batch; its latency and age are one sample each, weighted by `count`."""
        now = self._clock()
        with self._lock:
            metrics = self._partition(flow, topic, partition)
            metrics.idle_snapshot = None
            metrics.record_count += count
            metrics.byte_count += nbytes
            if count > 0:
                metrics.latency.add(now, replication_latency_ms, count)
                metrics.age.add(now, record_age_ms, count)

    def set_lag(self, flow: str, topic: str, partition: int, records: int) -> None:
        with self._lock:
            metrics = self._partition(flow, topic, partition)
            if metrics.lag != records:  # swept every few seconds: an unchanged lag keeps the idle snapshot
                metrics.lag, metrics.idle_snapshot = records, None

    def set_position(self, flow: str, topic: str, partition: int, offset: int) -> None:
        with self._lock:
            metrics = self._partition(flow, topic, partition)
            if metrics.position != offset:
                metrics.position, metrics.idle_snapshot = offset, None

    def add_lost_records(self, flow: str, topic: str, partition: int, count: int, reason: str) -> None:
        with self._lock:
            metrics = self._partition(flow, topic, partition)
            metrics.idle_snapshot = None
            metrics.lost += count
            metrics.last_loss_reason = reason

    def add_resume(self, flow: str, topic: str, partition: int, skipped: int, mismatch: str | None) -> None:
        """A restart found `skipped` records already at the target; `mismatch` says why it stopped short, if it did."""
        with self._lock:
            metrics = self._partition(flow, topic, partition)
            metrics.idle_snapshot = None
            metrics.resume_skipped += skipped
            if mismatch is not None:
                metrics.resume_mismatches += 1
                metrics.last_resume_mismatch = mismatch

    def set_task_state(self, flow: str, task: int, state: str, error: str | None = None) -> None:
        with self._lock:
            status = self._task(flow, task)
            status.state, status.error = state, error

    def report_fault(self, flow: str, task: int, fault: str) -> None:
        """A condition that lasts until cleared (e.g. a broker unreachable); re-reporting keeps `fault_since`."""
        now = self._wall_clock()
        with self._lock:
            status = self._task(flow, task)
            if status.fault is None:
                status.fault_since = now
            status.fault = fault

    def set_warning(self, flow: str, task: int, warning: str | None) -> None:
        with self._lock:
            self._task(flow, task).warning = warning

    def clear_fault(self, flow: str, task: int) -> None:
        with self._lock:
            status = self._task(flow, task)
            status.fault = status.fault_since = None

    # -- read by the control plane and Prometheus -------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        """Every flow's metrics as plain JSON-serialisable values (shape in the class docstring). Read-only: an idle
        partition's snapshot is the same object from one call to the next, until the partition changes, and so is
        an idle flow's (every partition idle, nothing written since)."""
        now = self._clock()
        with self._lock:
            flows = {name: _flow_snapshot(flow, now) for name, flow in sorted(self._flows.items())}
        return {"flows": flows}

    def prometheus_text(self) -> str:
        """The snapshot in Prometheus text exposition format 0.0.4."""
        return render_prometheus(self.snapshot())


def _flow_snapshot(flow: FlowMetrics, now: float) -> FlowSnapshot:
    if flow.idle_snapshot is not None:
        return flow.idle_snapshot
    tasks: dict[str, TaskSnapshot] = {
        str(task): {
            "state": s.state,
            "error": s.error,
            "fault": s.fault,
            "fault-since": s.fault_since,
            "warning": s.warning,
        }
        for task, s in sorted(flow.tasks.items())
    }
    partitions = {
        f"{topic}-{partition}": _partition_snapshot(topic, partition, m, now)
        for (topic, partition), m in sorted(flow.partitions.items())
    }
    snapshot: FlowSnapshot = {"tasks": tasks, "partitions": partitions}
    if all(m.idle_snapshot is not None for m in flow.partitions.values()):
        flow.idle_snapshot = snapshot  # its windows are empty: it changes only when a writer drops it
    return snapshot


def _partition_snapshot(topic: str, partition: int, m: PartitionMetrics, now: float) -> PartitionSnapshot:
    if m.idle_snapshot is not None:
        return m.idle_snapshot
    snapshot: PartitionSnapshot = {
        "topic": topic,
        "partition": partition,
        "record-count": m.record_count,
        "byte-count": m.byte_count,
        "replication-latency-ms": m.latency.stats(now),
        "record-age-ms": m.age.stats(now),
        "replication-record-lag": m.lag,
        "position": m.position,
        "record-lost-count": m.lost,
        "last-loss-reason": m.last_loss_reason,
        "resume-skipped-count": m.resume_skipped,
        "resume-mismatch-count": m.resume_mismatches,
        "last-resume-mismatch": m.last_resume_mismatch,
    }
    if snapshot["replication-latency-ms"]["max"] is None and snapshot["record-age-ms"]["max"] is None:
        m.idle_snapshot = snapshot  # empty windows stay empty until a batch, which drops it
    return snapshot


REGISTRY = MetricsRegistry()
