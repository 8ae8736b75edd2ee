"""What a task reports and what the flow status shows of it.

``TaskAssignment.status`` holds a ``TaskReport``: what the running task writes at every lease renewal
(``services/runner.py``), the data plane's metrics in their own MM2-style names (``replication.metrics``). The
flow status (``services/status.py``, ``GET /api/v1/flows/{id}/status/``) reads it into ``FlowStatus``: one
``TaskStatus`` per task, with one ``PartitionStatus`` per partition it reports. The API describes every field
(``orchestration/api/serializers.py``); a test holds the two together.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypedDict, cast

from replication.metrics import FlowSnapshot, PartitionSnapshot


class TaskReport(TypedDict):
    """``TaskAssignment.status`` once the task has reported (``{}`` before): what ``runner._status`` writes."""

    flow: str  # the flow's name
    task: int  # the task's id
    metrics: FlowSnapshot  # the task's own metrics: its state and fault, one entry per partition it replicates
    positions: dict[str, tuple[int, int, int]]  # "topic-partition" -> (acked next, stored next, source end offset)


def reported(status: Mapping[str, Any]) -> TaskReport | None:
    """The report in ``TaskAssignment.status``, or None while the task has not reported."""
    return cast(TaskReport, status) if status else None  # the runner writes nothing else there


@dataclass(frozen=True, kw_only=True)
class PartitionStatus:
    """One partition a task reports: where replication stands, how far behind, how fast, what was lost."""

    topic: str
    partition: int
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
    def of(cls, snapshot: PartitionSnapshot) -> PartitionStatus:
        """The partition as the task's metrics report it (MM2's names, hyphenated, to the API's)."""
        latency = snapshot["replication-latency-ms"]
        return cls(
            topic=snapshot["topic"],
            partition=snapshot["partition"],
            position=snapshot["position"],
            lag=snapshot["replication-record-lag"],
            latency_p50_ms=latency["p50"],
            latency_p99_ms=latency["p99"],
            record_count=snapshot["record-count"],
            byte_count=snapshot["byte-count"],
            lost_records=snapshot["record-lost-count"],
            last_loss_reason=snapshot["last-loss-reason"],
            # Absent from a status an older version stored (a paused flow keeps it until it runs again).
            resume_skipped=snapshot.get("resume-skipped-count", 0),
            resume_mismatches=snapshot.get("resume-mismatch-count", 0),
            last_resume_mismatch=snapshot.get("last-resume-mismatch"),
        )


@dataclass(frozen=True)
class Mismatch:
    """uReplicator's validation: partitions desired but not replicated, and replicated but not desired."""

    missing: list[list[str | int]] = field(default_factory=list)
    unexpected: list[list[str | int]] = field(default_factory=list)


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
    desired_partitions: list[list[str | int]] = field(default_factory=list)
    reported_partitions: list[list[str | int]] = field(default_factory=list)
    mismatch: Mismatch = field(default_factory=Mismatch)
    partitions: tuple[PartitionStatus, ...] = ()


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
