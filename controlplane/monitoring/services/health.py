"""A flow's health and totals, from the orchestration's per-task status (``flow_status``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings

from controlplane.monitoring.choices import Health
from controlplane.monitoring.models import FlowObservation
from controlplane.orchestration.choices import TaskState
from controlplane.orchestration.planning import runs
from controlplane.orchestration.taskstatus import FlowStatus

LAGGING_RECORDS = 10_000  # more source records than this not yet replicated: the edge turns amber


@dataclass(frozen=True)
class FlowTotals:
    """A flow summed over its tasks' partitions; None where no partition reported a value."""

    records: int
    lag: int | None
    latency_p99_ms: float | None
    partitions: int
    errors: list[str]
    unplaced: list[str]  # "task 1 not placed: needs 2 slots, 0 free on 1 worker (...)"


def totals(status: FlowStatus) -> FlowTotals:
    """The flow's tasks' totals summed (each task sums its partitions when it reports)."""
    lags = [t.lag for t in status.tasks if t.lag is not None]
    p99s = [t.latency_p99_ms for t in status.tasks if t.latency_p99_ms is not None]
    return FlowTotals(
        records=sum(t.records for t in status.tasks),
        lag=sum(lags) if lags else None,
        latency_p99_ms=max(p99s) if p99s else None,
        partitions=sum(t.partition_count for t in status.tasks),
        errors=errors(status),
        unplaced=unplaced(status),
    )


def unplaced(status: FlowStatus) -> list[str]:
    """Tasks no live worker has a free slot for, each with the controller's reason."""
    return [f"task {t.task_id} not placed: {t.unplaced_reason}" for t in status.tasks if t.unplaced_reason]


def errors(status: FlowStatus) -> list[str]:
    """The controller's and provisioning's errors, tasks that cannot be placed, and every task's last error or
    lasting fault, as the operator should read them."""
    found = [f"controller: {status.controller_error}"] if status.controller_error else []
    if status.provisioning.error:
        found.append(f"provisioning: {status.provisioning.error}")
    found += unplaced(status)
    for task in status.tasks:
        if task.state == TaskState.FAILED and task.last_error:
            found.append(f"task {task.task_id}: {task.last_error}")
        if task.fault:
            found.append(f"task {task.task_id}: {task.fault}")
    return found


def replicating(status: FlowStatus) -> bool:
    """Every task that should run holds a live lease: the tasks' own figures (lag, p99) are current."""
    tasks = [t for t in status.tasks if runs(t.task_id, t.desired_count)]
    return bool(tasks) and not status.paused and all(t.state == TaskState.RUNNING and t.live for t in tasks)


def stale_after() -> timedelta:
    """An observation older than three observer periods is no data: one late tick is not, a stopped observer is."""
    return timedelta(seconds=3 * settings.MIRRORPLANE_OBSERVE_INTERVAL_SECONDS)


def fresh_observation(observation: FlowObservation | None, now: datetime) -> FlowObservation | None:
    return observation if observation is not None and observation.at >= now - stale_after() else None


def current_lag(status: FlowStatus, flow_totals: FlowTotals, observation: FlowObservation | None) -> int | None:
    """The flow's lag, the one figure the graph, the dashboard's tile and the lag alerts read. While every task runs,
    their own report. Otherwise the observer's ``stopped_lag`` of the tasks that held no live lease when it looked
    (``stopped_tasks``: unplaced, stopped, failed, all of a paused flow's; source end offsets minus the stored
    positions, every desired partition included), plus the own report of each other task that runs: a stopped
    task's last report stays frozen (an unplaced one has none) while the source grows. A task that stopped since the
    observation counts from the next one. None (no data) when that observation is missing, stale (pass it through
    ``fresh_observation``) or could not read the offsets."""
    if replicating(status):
        return flow_totals.lag
    if observation is None or observation.stopped_lag is None:
        return None
    covered = set(observation.stopped_tasks)
    running = [t.lag for t in status.tasks if t.task_id not in covered and t.live and t.lag is not None]
    return observation.stopped_lag + (0 if status.paused else sum(running))


def health(status: FlowStatus, flow_totals: FlowTotals | None = None) -> Health:
    if not status.enabled:
        return Health.DISABLED
    if status.paused:
        return Health.PAUSED
    flow_totals = flow_totals or totals(status)
    if flow_totals.errors:  # a task that cannot be placed replicates nothing: failing, with the reason
        return Health.FAILING
    tasks = [t for t in status.tasks if runs(t.task_id, t.desired_count)]
    if not tasks or any(t.state != TaskState.RUNNING or not t.live for t in tasks):
        return Health.STARTING
    if flow_totals.lag is not None and flow_totals.lag > LAGGING_RECORDS:
        return Health.LAGGING
    return Health.HEALTHY
