"""What runs where: per-task and per-partition status, desired-vs-actual validation, and metrics rollups."""

from __future__ import annotations

from typing import Any

from controlplane.flows.models import Flow
from controlplane.orchestration.models import FlowPlan, TaskAssignment
from controlplane.orchestration.services import leases
from replication.prometheus import render_prometheus


def flow_status(flow: Flow) -> dict[str, Any]:
    """The flow's tasks with state, lease, replicated position, lag, latency and last error per partition."""
    plan = FlowPlan.objects.filter(flow=flow).first()
    return {
        "flow": flow.pk,
        "name": f"{flow.source.alias}->{flow.target.alias}",
        "enabled": flow.enabled,
        "paused": flow.paused,
        "generation": flow.generation,
        "controller_error": plan.last_error if plan else "",
        "tasks": [_task_status(a) for a in flow.assignments.select_related("worker")],
    }


def _task_status(assignment: TaskAssignment) -> dict[str, Any]:
    metrics = assignment.status.get("metrics", {}) if assignment.status else {}
    task_metrics = metrics.get("tasks", {}).get(str(assignment.task_id), {})
    return {
        "task_id": assignment.task_id,
        "state": assignment.state,
        "worker": assignment.worker.name if assignment.worker else None,
        "live": leases.holds_live_lease(assignment),
        "epoch": assignment.epoch,
        "lease_expires_at": assignment.lease_expires_at,
        "last_error": assignment.last_error,
        "fault": task_metrics.get("fault"),
        "desired_partitions": assignment.partitions,
        "reported_partitions": assignment.reported_partitions,
        "mismatch": mismatch(assignment),
        "partitions": [_partition_status(m) for m in metrics.get("partitions", {}).values()],
    }


def _partition_status(m: dict[str, Any]) -> dict[str, Any]:
    latency = m.get("replication-latency-ms") or {}
    return {
        "topic": m.get("topic"),
        "partition": m.get("partition"),
        "position": m.get("position"),
        "lag": m.get("replication-record-lag"),
        "latency_p50_ms": latency.get("p50"),
        "latency_p99_ms": latency.get("p99"),
        "record_count": m.get("record-count"),
        "byte_count": m.get("byte-count"),
        "lost_records": m.get("record-lost-count"),
        "last_loss_reason": m.get("last-loss-reason"),
    }


def mismatch(assignment: TaskAssignment) -> dict[str, list[list[Any]]]:
    """uReplicator's validation: partitions desired but not replicated, and replicated but not desired."""
    desired = {tuple(tp) for tp in assignment.partitions}
    actual = {tuple(tp) for tp in assignment.reported_partitions} if leases.holds_live_lease(assignment) else set()
    return {"missing": sorted(map(list, desired - actual)), "unexpected": sorted(map(list, actual - desired))}


def validation() -> list[dict[str, Any]]:
    """Every task whose actual assignment differs from the desired one."""
    rows = []
    for assignment in TaskAssignment.objects.select_related("flow__source", "flow__target"):
        diff = mismatch(assignment)
        if diff["missing"] or diff["unexpected"]:
            rows.append({"flow": assignment.flow_id, "task_id": assignment.task_id, "state": assignment.state, **diff})
    return rows


def prometheus_text() -> str:
    """Prometheus exposition of the metrics the running tasks rolled up into the database."""
    flows: dict[str, dict[str, Any]] = {}
    for status in TaskAssignment.objects.exclude(status={}).values_list("status", flat=True):
        name, metrics = status.get("flow"), status.get("metrics") or {}
        if not name:
            continue
        merged = flows.setdefault(name, {"tasks": {}, "partitions": {}})
        merged["tasks"].update(metrics.get("tasks", {}))
        merged["partitions"].update(metrics.get("partitions", {}))
    return render_prometheus({"flows": flows})
