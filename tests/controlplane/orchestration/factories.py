"""Clusters and flows for orchestration tests, pointing at the real test clusters."""

from __future__ import annotations

from typing import Any

from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from controlplane.orchestration.models import TaskAssignment, Worker
from controlplane.orchestration.services.taskreports import Reporter
from replication.metrics.registry import MetricsRegistry


def cluster(alias: str, bootstrap: str) -> Cluster:
    obj, _ = Cluster.objects.update_or_create(alias=alias, defaults={"bootstrap_servers": bootstrap})
    return obj


def flow(clusters: dict[str, str], source: str, target: str, topics: str, **fields: Any) -> Flow:
    defaults: dict[str, Any] = {
        "topics": [topics],
        "refresh_topics_interval_seconds": 1,
        "offset_flush_interval_ms": 200,
        "emit_heartbeats_enabled": False,
        "emit_checkpoints_enabled": False,
        **fields,
    }
    return Flow.objects.create(
        source=cluster(source, clusters[source]), target=cluster(target, clusters[target]), **defaults
    )


def live_worker(name: str, slots: int) -> Worker:
    """A worker that has just sent its heartbeat (registration sets last_seen_at)."""
    obj, _ = Worker.objects.update_or_create(name=name, defaults={"slots": slots, "stopping": False})
    return obj


def store_report(assignment: TaskAssignment, registry: MetricsRegistry, flow_name: str) -> Reporter:
    """Store the task's report as its runner does at a lease renewal: its status and its partitions' rows."""
    reporter = Reporter(assignment.flow_id, assignment.pk, flow_name, assignment.task_id)
    metrics = registry.snapshot()["flows"][flow_name]
    partitions: list[list[str | int]] = [[p["topic"], p["partition"]] for p in metrics["partitions"].values()]
    TaskAssignment.objects.filter(pk=assignment.pk).update(**reporter.assignment_fields(metrics, partitions))
    reporter.write_partitions(metrics)
    return reporter
