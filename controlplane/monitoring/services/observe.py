"""What the sampler reads from the clusters every few seconds: reachability, heartbeat hops and checkpoints.

The graph and the flow page read these rows instead of asking Kafka on every refresh.
"""

from __future__ import annotations

import logging
from datetime import datetime

from confluent_kafka import KafkaException
from django.utils import timezone

from controlplane.clusters.models import Cluster
from controlplane.clusters.services import connectivity_check
from controlplane.flows.models import Flow
from controlplane.flows.services import cluster_config
from controlplane.monitoring.models import ClusterObservation, FlowObservation
from controlplane.monitoring.services import readers
from replication.records import Checkpoint

log = logging.getLogger(__name__)


def observe_all(now: datetime | None = None) -> int:
    """Observe every cluster, then the checkpoints of every flow whose target answered; returns clusters seen."""
    now = now or timezone.now()
    reachable = {c.pk for c in Cluster.objects.all() if observe_cluster(c, now).reachable}
    for flow in Flow.objects.select_related("source", "target").filter(target_id__in=reachable):
        observe_flow(flow, now)
    return len(reachable)


def observe_cluster(cluster: Cluster, now: datetime) -> ClusterObservation:
    check = connectivity_check(cluster)
    values: dict[str, object] = {"at": now, "reachable": check["ok"], "error": check.get("error", "")}
    values["topic_count"] = check.get("topic_count")
    if check["ok"]:
        values.update(_heartbeats(cluster))
    observation, _ = ClusterObservation.objects.update_or_create(cluster=cluster, defaults=values)
    return observation


def _heartbeats(cluster: Cluster) -> dict[str, object]:
    config = cluster_config(cluster)
    try:
        hops = readers.upstream_hops(config)
        newest = {topic: readers.newest_heartbeat(config, topic) for topic in readers.heartbeat_topics(config)}
    except (KafkaException, TimeoutError) as exc:
        log.warning("cluster %s: heartbeats not read: %s", cluster.alias, exc)
        return {"error": f"heartbeats not read: {exc}"}
    beats = {topic: beat.timestamp for topic, beat in newest.items() if beat is not None}
    return {"upstream_hops": hops, "heartbeats": beats}


def observe_flow(flow: Flow, now: datetime) -> FlowObservation:
    values: dict[str, object] = {"at": now, "error": ""}
    try:
        latest = readers.latest_checkpoints(cluster_config(flow.target), flow.source.alias)
    except (KafkaException, TimeoutError) as exc:
        values["error"] = f"checkpoints not read: {exc}"
    else:
        values["checkpoints"] = {group: _freshness(cps) for group, cps in sorted(latest.items())}
    observation, _ = FlowObservation.objects.update_or_create(flow=flow, defaults=values)
    return observation


def _freshness(checkpoints: dict[tuple[str, int], Checkpoint]) -> dict[str, object]:
    """The newest checkpoint of the group (how fresh it is) and the oldest of its partitions' latest ones."""
    stamps = [cp.timestamp for cp in checkpoints.values() if cp.timestamp is not None]
    newest, oldest = (max(stamps), min(stamps)) if stamps else (None, None)
    return {"timestamp": newest, "oldest": oldest, "partitions": len(checkpoints)}
