"""What a task reports and what the flow status shows of it.

A running task reports at every lease renewal (``services/taskreports.py``, called by ``services/runner.py``), in the
data plane's own MM2-style metric names (``replication.metrics.registry``), in two parts sized for who reads them:

- ``TaskAssignment.status`` holds a ``TaskReport``: the task's own state and its totals over its partitions, a few
  hundred bytes whatever the partition count. The controller, the dashboard, the sampler and health read only this.
- ``PartitionReport`` rows hold each partition's snapshot, compactly (``compact``/``expand``), and a row is written
  only when its snapshot changed: an idle partition costs no write. The status API pages them; the failover's
  drain and ``/metrics`` read them.

The flow status (``services/status.py``, ``GET /api/v1/flows/{id}/status/``) reads both into ``FlowStatus``: one
``TaskStatus`` per task, and a page of ``PartitionStatus``. The API describes every field
(``orchestration/api/serializers.py``); a test holds the two together.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypedDict, cast

from replication.metrics.distribution import STATS_KEYS
from replication.metrics.registry import PartitionSnapshot, TaskSnapshot


class TaskTotals(TypedDict):
    """A task's partitions summed: what the flow's health, tiles and samples need, without reading partitions."""

    partitions: int
    records: int
    bytes: int
    lag: int | None  # None while no partition knows its lag
    latency_p99_ms: float | None  # the highest partition p99 over the window; None when idle
    lost_records: int


class TaskReport(TypedDict):
    """``TaskAssignment.status`` once the task has reported (``{}`` before)."""

    flow: str  # the flow's name
    task: int  # the task's id
    metrics: TaskSnapshot  # the task's own metrics: its state, fault and warning
    totals: TaskTotals


def reported(status: Mapping[str, Any]) -> TaskReport | None:
    """The report in ``TaskAssignment.status``, or None while the task has not reported (or a version before
    migration 0006 stored it, which that migration converts)."""
    return cast(TaskReport, status) if status and "totals" in status else None


def totals_of(partitions: Iterable[PartitionSnapshot]) -> TaskTotals:
    count = records = size = lost = 0
    lags: list[int] = []
    p99s: list[float] = []
    for p in partitions:
        count += 1
        records += p["record-count"]
        size += p["byte-count"]
        lost += p["record-lost-count"]
        if p["replication-record-lag"] is not None:
            lags.append(p["replication-record-lag"])
        p99 = p["replication-latency-ms"]["p99"]
        if p99 is not None:
            p99s.append(p99)
    return {
        "partitions": count,
        "records": records,
        "bytes": size,
        "lag": sum(lags) if lags else None,
        "latency_p99_ms": max(p99s) if p99s else None,
        "lost_records": lost,
    }


# A partition's snapshot in a PartitionReport row: its values in this order, each distribution as a list in
# STATS_KEYS order. Keys a version added later are appended, so a row written before reads their defaults.
_SCALARS: tuple[tuple[str, Any], ...] = (
    ("record-count", 0),
    ("byte-count", 0),
    ("replication-record-lag", None),
    ("position", None),
    ("record-lost-count", 0),
    ("last-loss-reason", None),
    ("resume-skipped-count", 0),
    ("resume-mismatch-count", 0),
    ("last-resume-mismatch", None),
)
_DISTRIBUTIONS = ("replication-latency-ms", "record-age-ms")


def compact(snapshot: Mapping[str, Any]) -> list[Any]:
    """A partition's snapshot as a positional list (no keys): about a fifth of its JSON size. Keys missing from a
    snapshot an older version stored take their defaults."""
    values: list[Any] = [snapshot.get(key, default) for key, default in _SCALARS]
    values += [[snapshot[d].get(k) for k in STATS_KEYS] for d in _DISTRIBUTIONS]
    return values


def expand(topic: str, partition: int, values: Sequence[Any]) -> PartitionSnapshot:
    """The snapshot ``compact`` stored, keyed again."""
    scalars = {key: values[i] for i, (key, _) in enumerate(_SCALARS)}
    distributions = {
        d: dict(zip(STATS_KEYS, values[len(_SCALARS) + i], strict=True)) for i, d in enumerate(_DISTRIBUTIONS)
    }
    return cast(PartitionSnapshot, {"topic": topic, "partition": partition} | scalars | distributions)


@dataclass(frozen=True, kw_only=True)
class PartitionStatus:
    """One partition a task reports: where replication stands, how far behind, how fast, what was lost."""

    topic: str
    partition: int
    task_id: int | None = None
    # "running": a task with a live lease reports it; "unplaced" (no worker has room for its task) or "stopped"
    # (its task is paused, failed or between leases): the observer's figures, from the stored position
    task_state: str = "running"
    position: int | None = None
    lag: int | None = None
    latency_p50_ms: float | None = None
    latency_p99_ms: float | None = None
    record_count: int = 0
    byte_count: int = 0
    lost_records: int = 0
    last_loss_reason: str | None = None
    resume_skipped: int = 0
    resume_mismatches: int = 0
    last_resume_mismatch: str | None = None

    @classmethod
    def of(
        cls, snapshot: PartitionSnapshot, task_id: int | None = None, task_state: str = "running"
    ) -> PartitionStatus:
        """The partition as the task's metrics report it (MM2's names, hyphenated, to the API's)."""
        latency = snapshot["replication-latency-ms"]
        return cls(
            topic=snapshot["topic"],
            partition=snapshot["partition"],
            task_id=task_id,
            task_state=task_state,
            position=snapshot["position"],
            lag=snapshot["replication-record-lag"],
            latency_p50_ms=latency["p50"],
            latency_p99_ms=latency["p99"],
            record_count=snapshot["record-count"],
            byte_count=snapshot["byte-count"],
            lost_records=snapshot["record-lost-count"],
            last_loss_reason=snapshot["last-loss-reason"],
            resume_skipped=snapshot["resume-skipped-count"],
            resume_mismatches=snapshot["resume-mismatch-count"],
            last_resume_mismatch=snapshot["last-resume-mismatch"],
        )


@dataclass(frozen=True)
class Mismatch:
    """uReplicator's validation: partitions desired but not replicated, and replicated but not desired (in the
    flow status, the first ``MISMATCH_SHOWN`` of each with their counts)."""

    missing: list[list[str | int]] = field(default_factory=list)
    unexpected: list[list[str | int]] = field(default_factory=list)
    missing_count: int = 0
    unexpected_count: int = 0


MISMATCH_SHOWN = 20


@dataclass(frozen=True, kw_only=True)
class TaskStatus:
    """One task of a flow: its state and why, where it runs, and the partitions it reports. The defaults describe a
    task that never ran."""

    task_id: int
    state: str  # a TaskState
    failure: str = ""  # a TaskFailure, '' unless FAILED
    worker: str | None = None
    live: bool = False
    epoch: int = 0
    lease_expires_at: datetime | None = None
    last_error: str = ""
    placement: str = "waiting"
    unplaced_reason: str = ""
    idle_reason: str = ""
    fault: str | None = None
    warning: str | None = None
    desired_count: int = 0  # partitions the controller assigned it
    reported_count: int = 0  # partitions it reports replicating
    mismatch: Mismatch | None = None  # None: not computed (``flow_statuses``, which many flows read at once)
    partition_count: int = 0  # partitions it reports
    records: int = 0
    lag: int | None = None
    latency_p99_ms: float | None = None
    lost_records: int = 0


@dataclass(frozen=True)
class PartitionPage:
    """One page of a flow's partitions, as their tasks last reported them, in (topic, partition) order unless
    sorted by lag; ``topic`` filters by a part of the topic name."""

    count: int = 0  # partitions matching the filter
    offset: int = 0
    limit: int = 0
    topic: str = ""
    order: str = "partition"
    results: tuple[PartitionStatus, ...] = ()


@dataclass(frozen=True)
class Provisioning:
    """Whether the flow's topics were provisioned (its tasks start only after that), and why it last failed."""

    provisioned: bool = False
    provisioned_at: datetime | None = None
    error: str = ""


@dataclass(frozen=True, kw_only=True)
class FlowStatus:
    """A flow's tasks as the orchestration runs them."""

    flow: int
    name: str
    enabled: bool = True
    paused: bool = False
    generation: int = 0
    controller_error: str = ""
    provisioning: Provisioning = Provisioning()
    rebalance_due_at: datetime | None = None
    tasks: tuple[TaskStatus, ...] = ()
    unplaced: int = 0
    partitions: PartitionPage = PartitionPage()
