"""The dashboard's data: clusters as nodes, flows as edges with health, throughput, lag and p99 latency,
remote-topic hops seen in heartbeats, and the summary tiles."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils import timezone

from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from controlplane.monitoring.choices import UNHEALTHY
from controlplane.monitoring.models import ClusterObservation, FlowObservation
from controlplane.monitoring.services.health import current_lag, fresh_observation, health, totals
from controlplane.monitoring.services.sampling import Rates, live_rates
from controlplane.orchestration.services.status import capacity_status, flow_statuses
from controlplane.orchestration.taskstatus import FlowStatus

# What a flow's edge and status read of it: loading every flow's filters and overrides (JSON) cost the dashboard
# of 2,000 flows about a third of its time.
EDGE_FIELDS = ("enabled", "paused", "generation", "tasks_max", "source__alias", "target__alias")


def dashboard(now: datetime | None = None) -> dict[str, Any]:
    now = now or timezone.now()
    clusters = list(Cluster.objects.select_related("observation"))
    flows = list(Flow.objects.select_related("source", "target").only(*EDGE_FIELDS))
    edges = flow_edges(flows, now)
    return {
        "at": now.isoformat(),
        "nodes": [node(cluster) for cluster in clusters],
        "edges": edges,
        "hops": hops(clusters, {(e["source"], e["target"]) for e in edges}),
        "tiles": tiles(edges, flows, now),
    }


def flow_edges(flows: list[Flow], now: datetime | None = None) -> list[dict[str, Any]]:
    """The graph's edge of each flow (health, rate, lag, p99): a few queries for any number of flows."""
    now = now or timezone.now()
    statuses = flow_statuses(flows)
    rates = live_rates(flows, now)
    observed = {o.flow_id: o for o in FlowObservation.objects.filter(flow_id__in=[f.pk for f in flows])}
    return [
        edge(flow, statuses[flow.pk], rates[flow.pk], fresh_observation(observed.get(flow.pk), now)) for flow in flows
    ]


def node(cluster: Cluster) -> dict[str, Any]:
    observation = _observation(cluster)
    return {
        "id": cluster.pk,
        "alias": cluster.alias,
        "url": f"/clusters/{cluster.pk}/",
        "reachable": observation.reachable if observation else None,
        "topic_count": observation.topic_count if observation else None,
        "error": observation.error if observation else "",
    }


def edge(flow: Flow, status: FlowStatus, rates: Rates, observation: FlowObservation | None = None) -> dict[str, Any]:
    """One flow's edge; its lag is ``current_lag``: live while the flow is paused or stopped, as its alert reads."""
    flow_totals = totals(status)
    return {
        "id": flow.pk,
        "name": flow.name,
        "url": f"/flows/{flow.pk}/",
        "source": flow.source.alias,
        "target": flow.target.alias,
        "health": str(health(status, flow_totals)),
        "paused": flow.paused,
        "records_per_second": rates.copied,
        "entering_per_second": rates.entering,
        "lag": current_lag(status, flow_totals, observation),
        "latency_p99_ms": flow_totals.latency_p99_ms,
        "errors": flow_totals.errors[:3],
        # Tasks no worker has room for: the edge gets its own colour, the reason is in `errors` too.
        "unplaced": len(flow_totals.unplaced),
        "unplaced_reason": flow_totals.unplaced[0] if flow_totals.unplaced else "",
    }


def hops(clusters: list[Cluster], direct: set[tuple[str, str]]) -> list[dict[str, Any]]:
    """Upstream clusters a cluster hears heartbeats from with no flow between them: the remote-topic paths. A
    cluster's own alias upstream of it (its heartbeats came back round a cycle of flows, `b.a.heartbeats` on a) is
    no path to draw."""
    found = []
    for cluster in clusters:
        observation = _observation(cluster)
        for upstream, count in (observation.upstream_hops if observation else {}).items():
            if count > 1 and upstream != cluster.alias and (upstream, cluster.alias) not in direct:
                found.append({"source": upstream, "target": cluster.alias, "hops": count})
    return found


def tiles(edges: list[dict[str, Any]], flows: list[Flow], now: datetime) -> dict[str, Any]:
    lags = [e["lag"] for e in edges if e["lag"] is not None]
    room = capacity_status()
    entering: dict[str, float] = {}
    for e in edges:
        entering[e["source"]] = entering.get(e["source"], 0.0) + e["entering_per_second"]
    return {
        # A stream through two flows is copied twice and enters once: the two figures mean one thing each.
        "entering_per_second": round(sum(entering.values()), 1),
        "entering_by_origin": [
            {"cluster": alias, "records_per_second": round(rate, 1)} for alias, rate in sorted(entering.items())
        ],
        "copied_per_second": round(sum(e["records_per_second"] for e in edges), 1),
        "total_lag": sum(lags) if lags else None,
        "flows": len(edges),
        "unhealthy": sum(1 for e in edges if e["health"] in UNHEALTHY),
        "unplaced_tasks": sum(e["unplaced"] for e in edges),
        "capacity": {k: room[k] for k in ("slots", "used", "starting", "free")} | {"workers": len(room["workers"])},
        "oldest_checkpoint": oldest_checkpoint(flows, now),
    }


def oldest_checkpoint(flows: list[Flow], now: datetime) -> dict[str, Any] | None:
    """The group whose newest checkpoint is the oldest: how stale a failover's starting point would be. An idle
    group (nothing committed on the source since its newest checkpoint) is not stale, however old: it is counted
    in ``idle_groups`` instead. None when no checkpoint was observed."""
    oldest: dict[str, Any] | None = None
    idle = 0
    observations = FlowObservation.objects.filter(flow_id__in=[f.pk for f in flows])
    for observation in observations.select_related("flow__source", "flow__target").only(
        "checkpoints", "flow__source__alias", "flow__target__alias"
    ):
        for group, fresh in observation.checkpoints.items():
            stamp = fresh.get("timestamp")
            if stamp is None:
                continue
            if fresh.get("idle"):
                idle += 1
            elif oldest is None or stamp < oldest["timestamp"]:
                oldest = {"flow": observation.flow.name, "group": group, "timestamp": stamp}
    if oldest is not None:
        oldest["age_seconds"] = max(0.0, round(now.timestamp() - oldest["timestamp"] / 1000, 1))
    elif idle:
        oldest = {"flow": None, "group": None, "timestamp": None, "age_seconds": None}
    return None if oldest is None else oldest | {"idle_groups": idle}


def _observation(cluster: Cluster) -> ClusterObservation | None:
    try:
        return cluster.observation
    except ClusterObservation.DoesNotExist:
        return None
