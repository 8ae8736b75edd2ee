"""What runs where: per-task and per-partition status, desired-vs-actual validation, and metrics rollups."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db.models import Count

from controlplane.flows.models import Flow
from controlplane.orchestration.models import FlowPlan, TaskAssignment
from controlplane.orchestration.planning import runs
from controlplane.orchestration.services import capacity, leases
from controlplane.orchestration.services.controller import rebalance_delay
from controlplane.orchestration.taskstatus import (
    FlowStatus,
    Mismatch,
    PartitionStatus,
    Provisioning,
    TaskStatus,
    reported,
)
from replication.metrics import FlowSnapshot
from replication.prometheus import render_prometheus


def flow_status(flow: Flow) -> FlowStatus:
    """The flow's tasks with state, lease, replicated position, lag, latency and last error per partition."""
    plan = FlowPlan.objects.filter(flow=flow).first()
    return FlowStatus(
        flow=flow.pk,
        name=f"{flow.source.alias}->{flow.target.alias}",
        enabled=flow.enabled,
        paused=flow.paused,
        generation=flow.generation,
        controller_error=plan.last_error if plan else "",
        provisioning=_provisioning(plan),
        rebalance_due_at=_rebalance_due_at(plan),
        tasks=tuple(_task_status(a, plan) for a in flow.assignments.select_related("worker")),
        unplaced=flow.assignments.exclude(unplaced_reason="").count(),
    )


def _rebalance_due_at(plan: FlowPlan | None) -> datetime | None:
    """When the controller evens out an imbalance that partition changes caused (uReplicator's delayed rebalance)."""
    return plan.imbalance_since + rebalance_delay() if plan and plan.imbalance_since else None


def _idle_reason(assignment: TaskAssignment, plan: FlowPlan | None) -> str:
    """Why a task has no partitions, so an idle task never reads as a silent PENDING."""
    if runs(assignment.task_id, assignment.partitions):
        return ""
    due = _rebalance_due_at(plan)
    if due is not None:
        return f"no partitions yet: the delayed rebalance gives it some at {due:%H:%M:%S} UTC"
    count = sum(len(a.partitions) for a in assignment.flow.assignments.all())
    tasks = assignment.flow.tasks_max
    return f"no partitions: the flow has {count} partition{'s' if count != 1 else ''} for {tasks} tasks"


def _provisioning(plan: FlowPlan | None) -> Provisioning:
    if plan is None:
        return Provisioning()
    return Provisioning(plan.provisioned_at is not None, plan.provisioned_at, plan.provision_error)


def capacity_status() -> dict[str, Any]:
    """The live workers' advertised slots, the slots in use and free, and how many tasks are unplaced."""
    room = capacity.current()
    return {
        "workers": [{"name": w.name, "slots": w.slots, "used": w.used, "free": w.free} for w in room.workers],
        "slots": room.slots,
        "used": room.used,
        "starting": room.reserved,
        "free": room.free,
        "unplaced_tasks": TaskAssignment.objects.exclude(unplaced_reason="").count(),
    }


def _task_status(assignment: TaskAssignment, plan: FlowPlan | None = None) -> TaskStatus:
    report = reported(assignment.status)
    metrics: FlowSnapshot = report["metrics"] if report else {"tasks": {}, "partitions": {}}
    task = metrics["tasks"].get(str(assignment.task_id))
    return TaskStatus(
        task_id=assignment.task_id,
        state=assignment.state,
        failure=assignment.failure,
        worker=assignment.worker.name if assignment.worker else None,
        live=leases.holds_live_lease(assignment),
        epoch=assignment.epoch,
        lease_expires_at=assignment.lease_expires_at,
        last_error=assignment.last_error,
        placement=_placement(assignment),
        unplaced_reason=assignment.unplaced_reason,
        idle_reason=_idle_reason(assignment, plan),
        fault=task["fault"] if task else None,
        warning=task.get("warning") if task else None,  # absent in the status of older versions
        desired_partitions=assignment.partitions,
        reported_partitions=assignment.reported_partitions,
        mismatch=mismatch(assignment),
        partitions=tuple(PartitionStatus.of(m) for m in metrics["partitions"].values()),
    )


def _placement(assignment: TaskAssignment) -> str:
    """ "running" (live lease), "unplaced" (no worker has room: see `unplaced_reason`), "dispatched" (on its way to
    a worker), "idle" (no partitions: nothing to run until a rebalance gives it some) or "waiting" (not dispatched:
    paused, failed and waiting to retry, or the flow's topics not provisioned yet)."""
    if leases.holds_live_lease(assignment):
        return "running"
    if assignment.unplaced_reason:
        return "unplaced"
    if not runs(assignment.task_id, assignment.partitions):
        return "idle"
    return "dispatched" if assignment.dispatched_at else "waiting"


def mismatch(assignment: TaskAssignment) -> Mismatch:
    """uReplicator's validation: partitions desired but not replicated, and replicated but not desired."""
    desired = {tuple(tp) for tp in assignment.partitions}
    actual = {tuple(tp) for tp in assignment.reported_partitions} if leases.holds_live_lease(assignment) else set()
    return Mismatch(sorted(map(list, desired - actual)), sorted(map(list, actual - desired)))


def validation() -> list[dict[str, Any]]:
    """Every task whose actual assignment differs from the desired one."""
    rows = []
    for assignment in TaskAssignment.objects.select_related("flow__source", "flow__target"):
        diff = mismatch(assignment)
        if diff.missing or diff.unexpected:
            row = {"flow": assignment.flow_id, "task_id": assignment.task_id, "state": assignment.state}
            rows.append(row | {"missing": diff.missing, "unexpected": diff.unexpected})
    return rows


def prometheus_text() -> str:
    """Prometheus exposition of the metrics the running tasks rolled up into the database."""
    flows: dict[str, FlowSnapshot] = {}
    for status in TaskAssignment.objects.exclude(status={}).values_list("status", flat=True):
        report = reported(status)
        if report is None:
            continue
        merged = flows.setdefault(report["flow"], {"tasks": {}, "partitions": {}})
        merged["tasks"].update(report["metrics"]["tasks"])
        merged["partitions"].update(report["metrics"]["partitions"])
    return render_prometheus({"flows": flows}) + capacity_prometheus()


def capacity_prometheus() -> str:
    """Gauges of placement: tasks no live worker has room for, per flow (0 included), and each worker's slots."""
    lines = [
        "# HELP mirrorplane_tasks_unplaced Tasks of the flow that no live worker has a free slot for.",
        "# TYPE mirrorplane_tasks_unplaced gauge",
    ]
    unplaced = dict(
        TaskAssignment.objects.exclude(unplaced_reason="")
        .values("flow_id")
        .annotate(n=Count("id"))
        .values_list("flow_id", "n")
    )
    for flow in Flow.objects.select_related("source", "target").order_by("pk"):
        lines.append(f'mirrorplane_tasks_unplaced{{flow="{_label(flow.name)}"}} {unplaced.get(flow.pk, 0)}')
    room = capacity.current()
    for metric, help_text, value in (
        ("mirrorplane_worker_slots", "Replication task slots a live worker advertises.", lambda w: w.slots),
        ("mirrorplane_worker_slots_used", "Slots of a live worker taken by live leases.", lambda w: w.used),
    ):
        lines += [f"# HELP {metric} {help_text}", f"# TYPE {metric} gauge"]
        lines += [f'{metric}{{worker="{_label(w.name)}"}} {value(w)}' for w in room.workers]
    return "\n".join(lines) + "\n"


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
