"""Per-process replication metrics: the engine records them, the control plane and Prometheus read them.

Names follow MM2's `MirrorSourceConnector` metrics (`record-count`, `byte-count`, `replication-latency-ms`,
`record-age-ms`), plus what MM2 lacks: `replication-record-lag` (source end offset minus replicated position) and
`record-lost-count` (records that can no longer be replicated: a retention gap, a recreated topic).
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

WINDOW_SECONDS = 60.0
WINDOW_SAMPLES = 1024
QUANTILES = ((50, "p50", "0.5"), (95, "p95", "0.95"), (99, "p99", "0.99"))  # percent, snapshot key, label
_STAT_KEYS = ("min", "max", "avg", "p50", "p95", "p99")


class Distribution:
    """Weighted samples over a sliding window: the last `window_seconds`, and never more than `max_samples`.

    Each sample is one batch's value weighted by its record count. min, max and avg (weighted) cover the window,
    as MM2's windowed `-min/-max/-avg` do. A percentile is the weighted nearest rank: the smallest sample value
    at which the cumulative weight, in value order, reaches p% of the window's total weight. `total_count` and
    `total_sum` never reset (they feed Prometheus `_count`/`_sum`).
    """

    def __init__(self, window_seconds: float = WINDOW_SECONDS, max_samples: int = WINDOW_SAMPLES) -> None:
        self.window_seconds = window_seconds
        self._samples: deque[tuple[float, float, int]] = deque(maxlen=max_samples)  # (time, value, weight)
        self.total_count = 0
        self.total_sum = 0.0

    def add(self, now: float, value: float, weight: int) -> None:
        self._evict(now)
        self._samples.append((now, value, weight))
        self.total_count += weight
        self.total_sum += value * weight

    def _evict(self, now: float) -> None:
        horizon = now - self.window_seconds
        while self._samples and self._samples[0][0] <= horizon:
            self._samples.popleft()

    def stats(self, now: float) -> dict[str, float | None]:
        """min, max, avg, p50, p95, p99 of the window (None when it is empty), and the cumulative sum and count."""
        self._evict(now)
        result: dict[str, float | None] = {"sum": self.total_sum, "count": self.total_count}
        if not self._samples:
            return dict.fromkeys(_STAT_KEYS) | result
        ordered = sorted((value, weight) for _, value, weight in self._samples)
        total = sum(weight for _, weight in ordered)
        result |= {
            "min": ordered[0][0],
            "max": ordered[-1][0],
            "avg": sum(value * weight for value, weight in ordered) / total,
        }
        for percent, key, _ in QUANTILES:
            result[key] = _weighted_rank(ordered, total, percent)
        return result


def _weighted_rank(ordered: list[tuple[float, int]], total: int, percent: int) -> float:
    cumulative = 0
    for value, weight in ordered:
        cumulative += weight
        if cumulative * 100 >= percent * total:  # integers: exact, no float rounding at the boundary
            return value
    return ordered[-1][0]


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


@dataclass
class TaskStatus:
    """A task's state (`RUNNING`, `FAILED`, ...), its error if it failed, and a lasting fault if one is reported."""

    state: str = "UNASSIGNED"
    error: str | None = None
    fault: str | None = None
    fault_since: float | None = None  # epoch seconds of the first report since the last clear


@dataclass
class FlowMetrics:
    tasks: dict[int, TaskStatus] = field(default_factory=dict)
    partitions: dict[tuple[str, int], PartitionMetrics] = field(default_factory=dict)


class MetricsRegistry:
    """The metrics of every flow in this process, behind one lock.

    The engine calls it once per partition batch, never per record. `snapshot()` has this shape::

        {"flows": {flow: {
            "tasks": {"0": {"state": "RUNNING", "error": None, "fault": None, "fault-since": None}},
            "partitions": {"orders-3": {
                "topic": "orders", "partition": 3, "record-count": 10, "byte-count": 512,
                "replication-latency-ms": {"min", "max", "avg", "p50", "p95", "p99",  # over the window; None if idle
                                           "sum", "count"},  # cumulative, count in records
                "record-age-ms": {...same keys...},
                "replication-record-lag": 0, "position": 1500,  # None until first set
                "record-lost-count": 0, "last-loss-reason": None}}}}}
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

    def _partition(self, flow: str, topic: str, partition: int) -> PartitionMetrics:
        partitions = self._flows.setdefault(flow, FlowMetrics()).partitions
        metrics = partitions.get((topic, partition))
        if metrics is None:
            metrics = partitions[topic, partition] = PartitionMetrics(
                Distribution(*self._window), Distribution(*self._window)
            )
        return metrics

    def _task(self, flow: str, task: int) -> TaskStatus:
        return self._flows.setdefault(flow, FlowMetrics()).tasks.setdefault(task, TaskStatus())

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
            metrics.record_count += count
            metrics.byte_count += nbytes
            if count > 0:
                metrics.latency.add(now, replication_latency_ms, count)
                metrics.age.add(now, record_age_ms, count)

    def set_lag(self, flow: str, topic: str, partition: int, records: int) -> None:
        with self._lock:
            self._partition(flow, topic, partition).lag = records

    def set_position(self, flow: str, topic: str, partition: int, offset: int) -> None:
        with self._lock:
            self._partition(flow, topic, partition).position = offset

    def add_lost_records(self, flow: str, topic: str, partition: int, count: int, reason: str) -> None:
        with self._lock:
            metrics = self._partition(flow, topic, partition)
            metrics.lost += count
            metrics.last_loss_reason = reason

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

    def clear_fault(self, flow: str, task: int) -> None:
        with self._lock:
            status = self._task(flow, task)
            status.fault = status.fault_since = None

    def forget_flow(self, flow: str) -> None:
        """Drop a flow's metrics (it was deleted or moved to another process)."""
        with self._lock:
            self._flows.pop(flow, None)

    # -- read by the control plane and Prometheus -------------------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """Every flow's metrics as plain JSON-serialisable values (shape in the class docstring)."""
        now = self._clock()
        with self._lock:
            flows = {name: _flow_snapshot(flow, now) for name, flow in sorted(self._flows.items())}
        return {"flows": flows}

    def prometheus_text(self) -> str:
        """The snapshot in Prometheus text exposition format 0.0.4."""
        return render_prometheus(self.snapshot())


def _flow_snapshot(flow: FlowMetrics, now: float) -> dict[str, Any]:
    tasks = {
        str(task): {"state": s.state, "error": s.error, "fault": s.fault, "fault-since": s.fault_since}
        for task, s in sorted(flow.tasks.items())
    }
    partitions = {
        f"{topic}-{partition}": _partition_snapshot(topic, partition, m, now)
        for (topic, partition), m in sorted(flow.partitions.items())
    }
    return {"tasks": tasks, "partitions": partitions}


def _partition_snapshot(topic: str, partition: int, m: PartitionMetrics, now: float) -> dict[str, Any]:
    return {
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
    }


# -- Prometheus text exposition format 0.0.4 -------------------------------------------------------------------
_DISTRIBUTIONS = (
    ("replication-latency-ms", "mirrorplane_replication_latency_ms", "Source record timestamp to target ack, ms"),
    ("record-age-ms", "mirrorplane_record_age_ms", "Age of a record when the task consumed it, ms"),
)


def render_prometheus(snapshot: dict[str, Any]) -> str:
    """A `snapshot()` as Prometheus text.

    Distributions are summaries: quantiles over the sliding window (NaN while it is empty), `_sum`/`_count`
    cumulative, and a separate `_max` gauge over the window (also NaN while empty). Lag appears once it is set.
    """
    partitions = [
        (_labels(("flow", flow), ("topic", p["topic"]), ("partition", p["partition"])), p)
        for flow, metrics in snapshot["flows"].items()
        for p in metrics["partitions"].values()
    ]
    tasks = [
        (_labels(("flow", flow), ("task", task)), status)
        for flow, metrics in snapshot["flows"].items()
        for task, status in metrics["tasks"].items()
    ]
    lines: list[str] = []
    _family(lines, "mirrorplane_record_count_total", "counter", "Records replicated", _pick(partitions, "record-count"))
    _family(lines, "mirrorplane_byte_count_total", "counter", "Bytes replicated", _pick(partitions, "byte-count"))
    for key, name, text in _DISTRIBUTIONS:
        _summary(lines, name, text, [(labels, p[key]) for labels, p in partitions])
    lag = "Records in the source not yet replicated (end offset minus replicated position)"
    _family(lines, "mirrorplane_replication_record_lag", "gauge", lag, _pick(partitions, "replication-record-lag"))
    lost = "Records that can no longer be replicated (retention gap, topic recreated)"
    _family(lines, "mirrorplane_record_lost_count_total", "counter", lost, _pick(partitions, "record-lost-count"))
    up = ((labels, int(status["state"] == "RUNNING")) for labels, status in tasks)
    _family(lines, "mirrorplane_task_up", "gauge", "1 if the task is RUNNING", up)
    faulted = ((labels, int(status["fault"] is not None)) for labels, status in tasks)
    _family(lines, "mirrorplane_task_faulted", "gauge", "1 while the task reports a lasting fault", faulted)
    return "\n".join(lines) + "\n"


def _pick(rows: list[tuple[str, dict[str, Any]]], key: str) -> Iterable[tuple[str, float | None]]:
    return ((labels, row[key]) for labels, row in rows)


def _family(lines: list[str], name: str, kind: str, text: str, samples: Iterable[tuple[str, float | None]]) -> None:
    lines += (f"# HELP {name} {text}.", f"# TYPE {name} {kind}")
    lines.extend(f"{name}{{{labels}}} {_number(value)}" for labels, value in samples if value is not None)


def _summary(lines: list[str], name: str, text: str, rows: list[tuple[str, dict[str, Any]]]) -> None:
    lines += (f"# HELP {name} {text}, quantiles over a sliding window.", f"# TYPE {name} summary")
    for labels, stats in rows:
        lines.extend(f'{name}{{{labels},quantile="{q}"}} {_number(stats[key])}' for _, key, q in QUANTILES)
        lines.append(f"{name}_sum{{{labels}}} {_number(stats['sum'])}")
        lines.append(f"{name}_count{{{labels}}} {_number(stats['count'])}")
    maxima = ((labels, math.nan if stats["max"] is None else stats["max"]) for labels, stats in rows)
    _family(lines, f"{name}_max", "gauge", f"{text}, maximum over a sliding window", maxima)


def _labels(*pairs: tuple[str, object]) -> str:
    return ",".join(f'{name}="{_escape(str(value))}"' for name, value in pairs)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "NaN"
    if isinstance(value, float) and math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(value)


REGISTRY = MetricsRegistry()
