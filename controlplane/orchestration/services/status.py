"""What runs where: per-task and per-partition status, desired-vs-actual validation, and metrics rollups."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import Any

from django.db.models import BooleanField, Count, ExpressionWrapper, F, Q, QuerySet
from django.utils import timezone

from controlplane.core.db import JSONArrayLength
from controlplane.flows.models import Flow
from controlplane.orchestration.models import ControllerRun, FlowPlan, PartitionReport, TaskAssignment
from controlplane.orchestration.planning import runs
from controlplane.orchestration.services import capacity, leases
from controlplane.orchestration.services.controller import rebalance_delay
from controlplane.orchestration.taskstatus import (
    MISMATCH_SHOWN,
    FlowStatus,
    Mismatch,
    PartitionPage,
    PartitionStatus,
    Provisioning,
    TaskStatus,
    expand,
    reported,
)
from replication.metrics.prometheus import render_prometheus
from replication.metrics.registry import FlowSnapshot

ORDERS = {"partition": ("topic", "partition"), "-lag": (F("lag").desc(nulls_last=True), "topic", "partition")}


def flow_status(flow: Flow, page: PartitionPage | None = None) -> FlowStatus:
    """The flow's tasks with state, lease, totals, last error and desired-versus-actual mismatch, and, when asked
    for, a page of its partitions (replicated position, lag, latency per partition). Reads no partition row unless a
    page is asked for, and a task's partition lists only when they differ."""
    plan = FlowPlan.objects.filter(flow=flow).defer("partitions").first()
    rows = TaskAssignment.objects.filter(flow=flow).defer("partitions", "reported_partitions")
    # Both lists are kept sorted (the controller's and the reporter's), so equal sets are equal values: compared by
    # the database without shipping them (decoding two 35 KB lists per task of 2,500 partitions cost 20 ms at 10k).
    compared = rows.annotate(same=ExpressionWrapper(Q(partitions=F("reported_partitions")), BooleanField()))
    status = _flow_status(flow, plan, list(_counted(compared)), with_mismatch=True)
    return replace(status, partitions=partition_page(flow, page)) if page is not None else status


def flow_statuses(flows: list[Flow]) -> dict[int, FlowStatus]:
    """``flow_status`` of many flows (no partitions, no ``mismatch``) in three queries, whatever their number: the
    dashboard, the sampler and the alerts read every flow every few seconds. The assignments' partition lists (a
    task of 2,500 partitions holds two lists of 35 KB) are counted by the database, not loaded."""
    ids = [f.pk for f in flows]
    # Not the listed source partitions: at 10,000 a 140 KB document, most of the sampler's and alerts' query time.
    plans = {p.flow_id: p for p in FlowPlan.objects.filter(flow_id__in=ids).defer("partitions")}
    assignments: dict[int, list[TaskAssignment]] = {}
    rows = TaskAssignment.objects.filter(flow_id__in=ids).defer("partitions", "reported_partitions")
    for a in _counted(rows):
        assignments.setdefault(a.flow_id, []).append(a)
    return {f.pk: _flow_status(f, plans.get(f.pk), assignments.get(f.pk, []), with_mismatch=False) for f in flows}


def _counted(rows: QuerySet[TaskAssignment]) -> QuerySet[TaskAssignment]:
    """Assignments with their worker and with ``desired_count`` and ``reported_count`` counted by the database."""
    return rows.select_related("worker").annotate(
        desired_count=JSONArrayLength("partitions"), reported_count=JSONArrayLength("reported_partitions")
    )


def _desired(assignment: TaskAssignment) -> int:
    return int(getattr(assignment, "desired_count"))  # noqa: B009 (an annotation of _counted)


def _flow_status(
    flow: Flow, plan: FlowPlan | None, assignments: list[TaskAssignment], with_mismatch: bool
) -> FlowStatus:
    assigned = sum(_desired(a) for a in assignments)
    return FlowStatus(
        flow=flow.pk,
        name=f"{flow.source.alias}->{flow.target.alias}",
        enabled=flow.enabled,
        paused=flow.paused,
        generation=flow.generation,
        controller_error=plan.last_error if plan else "",
        provisioning=_provisioning(plan),
        rebalance_due_at=_rebalance_due_at(plan),
        tasks=tuple(_task_status(a, flow, plan, assigned, with_mismatch) for a in assignments),
        unplaced=sum(1 for a in assignments if a.unplaced_reason),
    )


def partition_page(flow: Flow, page: PartitionPage) -> PartitionPage:
    """``page`` (its offset, limit, topic filter and order) filled with the matching partitions' reports."""
    rows = PartitionReport.objects.filter(flow=flow).select_related("assignment")
    if page.topic:
        rows = rows.filter(topic__icontains=page.topic)
    ordered = rows.order_by(*ORDERS[page.order]).only(
        "topic",
        "partition",
        "snapshot",
        "assignment__task_id",
        "assignment__lease_expires_at",
        "assignment__unplaced_reason",
    )
    results = tuple(
        PartitionStatus.of(expand(r.topic, r.partition, r.snapshot), r.assignment.task_id, _held(r.assignment, flow))
        for r in ordered[page.offset : page.offset + page.limit]
    )
    return replace(page, count=rows.count(), results=results)


def _held(assignment: TaskAssignment, flow: Flow) -> str:
    """``PartitionStatus.task_state``: whether a live task reports the partition, or the observer's figures stand."""
    if leases.holds_live_lease(assignment) and not flow.paused:
        return "running"
    return "unplaced" if assignment.unplaced_reason else "stopped"


def reported_partitions(flow_id: int) -> set[tuple[str, int]]:
    """Every partition of the flow some task has reported."""
    return set(PartitionReport.objects.filter(flow_id=flow_id).values_list("topic", "partition"))


def _rebalance_due_at(plan: FlowPlan | None) -> datetime | None:
    """When the controller evens out an imbalance that partition changes caused (uReplicator's delayed rebalance)."""
    return plan.imbalance_since + rebalance_delay() if plan and plan.imbalance_since else None


def _idle_reason(assignment: TaskAssignment, flow: Flow, plan: FlowPlan | None, count: int) -> str:
    """Why a task has no partitions (the flow has ``count``), so an idle task never reads as a silent PENDING."""
    if runs(assignment.task_id, _desired(assignment)):
        return ""
    due = _rebalance_due_at(plan)
    if due is not None:
        return f"no partitions yet: the delayed rebalance gives it some at {due:%H:%M:%S} UTC"
    tasks = flow.tasks_max
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


def _task_status(
    assignment: TaskAssignment, flow: Flow, plan: FlowPlan | None, assigned: int, with_mismatch: bool
) -> TaskStatus:
    report = reported(assignment.status)
    task = report["metrics"] if report else None
    totals = report["totals"] if report else None
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
        idle_reason=_idle_reason(assignment, flow, plan, assigned),
        fault=task["fault"] if task else None,
        warning=task["warning"] if task else None,
        desired_count=_desired(assignment),
        reported_count=int(getattr(assignment, "reported_count")),  # noqa: B009 (an annotation of _counted)
        mismatch=_shown_mismatch(assignment) if with_mismatch else None,
        partition_count=totals["partitions"] if totals else 0,
        records=totals["records"] if totals else 0,
        lag=totals["lag"] if totals else None,
        latency_p99_ms=totals["latency_p99_ms"] if totals else None,
        lost_records=totals["lost_records"] if totals else 0,
    )


def _placement(assignment: TaskAssignment) -> str:
    """ "running" (live lease), "unplaced" (no worker has room: see `unplaced_reason`), "dispatched" (on its way to
    a worker), "idle" (no partitions: nothing to run until a rebalance gives it some) or "waiting" (not dispatched:
    paused, failed and waiting to retry, or the flow's topics not provisioned yet)."""
    if leases.holds_live_lease(assignment):
        return "running"
    if assignment.unplaced_reason:
        return "unplaced"
    if not runs(assignment.task_id, _desired(assignment)):
        return "idle"
    return "dispatched" if assignment.dispatched_at else "waiting"


def _shown_mismatch(assignment: TaskAssignment) -> Mismatch:
    """``mismatch`` of a task of ``flow_status``, whose lists the database compared: they are loaded only when they
    differ (a change being applied) or the task is not running."""
    if getattr(assignment, "same") and leases.holds_live_lease(assignment):  # noqa: B009 (an annotation)
        return Mismatch()
    assignment.refresh_from_db(fields=["partitions", "reported_partitions"])
    return mismatch(assignment, MISMATCH_SHOWN)


def mismatch(assignment: TaskAssignment, shown: int | None = None) -> Mismatch:
    """uReplicator's validation: partitions desired but not replicated, and replicated but not desired (the first
    ``shown`` of each, all by default, with their counts)."""
    desired = {(str(t), int(p)) for t, p in assignment.partitions}
    live = leases.holds_live_lease(assignment)
    actual = {(str(t), int(p)) for t, p in assignment.reported_partitions} if live else set()
    missing, unexpected = sorted(desired - actual), sorted(actual - desired)
    return Mismatch(
        [list(tp) for tp in missing[:shown]],
        [list(tp) for tp in unexpected[:shown]],
        len(missing),
        len(unexpected),
    )


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
    names: dict[int, str] = {}
    for flow_id, status in TaskAssignment.objects.exclude(status={}).values_list("flow_id", "status"):
        report = reported(status)
        if report is None:
            continue
        names[flow_id] = report["flow"]
        merged = flows.setdefault(report["flow"], {"tasks": {}, "partitions": {}})
        merged["tasks"][str(report["task"])] = report["metrics"]
    for flow_id, topic, partition, values in PartitionReport.objects.filter(flow_id__in=names).values_list(
        "flow_id", "topic", "partition", "snapshot"
    ):
        flows[names[flow_id]]["partitions"][f"{topic}-{partition}"] = expand(topic, partition, values)
    return render_prometheus({"flows": flows}) + capacity_prometheus() + controller_prometheus()


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
    gauges: tuple[tuple[str, str, Callable[[capacity.WorkerCapacity], int]], ...] = (
        ("mirrorplane_worker_slots", "Replication task slots a live worker advertises.", lambda w: w.slots),
        ("mirrorplane_worker_slots_used", "Slots of a live worker taken by live leases.", lambda w: w.used),
    )
    for metric, help_text, value in gauges:
        lines += [f"# HELP {metric} {help_text}", f"# TYPE {metric} gauge"]
        lines += [f'{metric}{{worker="{_label(w.name)}"}} {value(w)}' for w in room.workers]
    return "\n".join(lines) + "\n"


def controller_prometheus() -> str:
    """The controller loop's counters (nothing before beat first started it): ticks, late ticks, the longest tick
    and the age of the last one, which grows when the loop stopped."""
    run = ControllerRun.objects.filter(pk=1).first()
    if run is None:
        return ""
    age = (timezone.now() - run.ticked_at).total_seconds() if run.ticked_at is not None else None
    lines: list[str] = []
    for metric, kind, help_text, value in (
        ("mirrorplane_controller_ticks_total", "counter", "Controller ticks since beat started.", run.ticks),
        (
            "mirrorplane_controller_late_ticks_total",
            "counter",
            "Ticks that began more than 1.5 intervals after the one before.",
            run.late_ticks,
        ),
        (
            "mirrorplane_controller_longest_tick_seconds",
            "gauge",
            "The longest tick since beat started.",
            run.longest_tick_seconds,
        ),
        ("mirrorplane_controller_last_tick_age_seconds", "gauge", "Seconds since the last tick.", age),
    ):
        if value is not None:
            lines += [f"# HELP {metric} {help_text}", f"# TYPE {metric} {kind}", f"{metric} {value:g}"]
    return "\n".join(lines) + "\n" if lines else ""


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
