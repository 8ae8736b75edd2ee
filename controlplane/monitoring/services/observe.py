"""What the sampler reads from the clusters every few seconds: reachability, heartbeat hops and checkpoints.

The graph and the flow page read these rows instead of asking Kafka on every refresh.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any, TypeVar

from confluent_kafka import KafkaException
from django.db import IntegrityError
from django.db.models import Model
from django.utils import timezone

from controlplane.clusters import browse
from controlplane.clusters.models import Cluster
from controlplane.clusters.services import listing
from controlplane.flows.models import Flow
from controlplane.flows.services import cluster_config, flow_config
from controlplane.monitoring.models import ClusterObservation, FlowObservation
from controlplane.monitoring.services import readers
from controlplane.monitoring.services.health import replicating
from controlplane.orchestration.models import PartitionReport
from controlplane.orchestration.services.status import flow_status
from controlplane.orchestration.taskstatus import expand
from replication.emitters.checkpoints import group_offsets
from replication.mm2.filters import TopicFilter
from replication.mm2.policy import is_heartbeats_topic, is_internal_topic
from replication.mm2.records import Checkpoint

log = logging.getLogger(__name__)
M = TypeVar("M", bound=Model)


def observe_all(now: datetime | None = None) -> int:
    """Observe every cluster, then the checkpoints of every flow whose target answered; returns clusters seen."""
    now = now or timezone.now()
    reachable = {c.pk for c in Cluster.objects.all() if observe_cluster(c, now).reachable}
    for flow in Flow.objects.select_related("source", "target").filter(target_id__in=reachable):
        observe_flow(flow, now, source_reachable=flow.source_id in reachable)
    return len(reachable)


def observe_cluster(cluster: Cluster, now: datetime) -> ClusterObservation:
    check, topics = listing(cluster)  # one metadata request for reachability, hops and heartbeat topics
    values: dict[str, object] = {"at": now, "reachable": check["ok"], "error": check.get("error", "")}
    values["topic_count"] = check.get("topic_count")
    if check["ok"]:
        values.update(_heartbeats(cluster, topics))
    return _stored(ClusterObservation, values, cluster=cluster)


def _heartbeats(cluster: Cluster, topics: set[str]) -> dict[str, object]:
    config = cluster_config(cluster)
    hops = readers.upstream_hops(topics)
    try:
        newest = {topic: readers.newest_heartbeat(config, topic) for topic in readers.heartbeat_topics(topics)}
    except (KafkaException, TimeoutError) as exc:
        log.warning("cluster %s: heartbeats not read: %s", cluster.alias, exc)
        return {"error": f"heartbeats not read: {exc}"}
    beats = {topic: beat.timestamp for topic, beat in newest.items() if beat is not None}
    return {"upstream_hops": hops, "heartbeats": beats}


def observe_flow(flow: Flow, now: datetime, source_reachable: bool = True) -> FlowObservation:
    values: dict[str, object] = {"at": now, "error": "", "stopped_lag": None}
    if source_reachable and not replicating(flow_status(flow)):
        values["stopped_lag"] = stopped_lag(flow)
    try:
        latest = readers.latest_checkpoints(cluster_config(flow.target), flow.source.alias)
    except (KafkaException, TimeoutError) as exc:
        values["error"] = f"checkpoints not read: {exc}"
    else:
        idle = _idle_groups(flow, latest) if source_reachable else None
        values["checkpoints"] = {
            group: _freshness(cps, None if idle is None else group in idle) for group, cps in sorted(latest.items())
        }
    return _stored(FlowObservation, values, flow=flow)


def _stored(model: type[M], values: dict[str, object], **owner: Any) -> M:
    """The observation written over the owner's last one. The reads before it take seconds, outside any
    transaction, so the cluster or flow may have been deleted meanwhile: then there is nothing to keep and the
    observation is returned unsaved, not raised as an error of the sampler."""
    try:
        observation, _ = model._default_manager.update_or_create(defaults=values, **owner)
    except IntegrityError:
        (name, gone), *_ = owner.items()
        log.info("%s %s was deleted while it was observed; its observation is dropped", name, gone.pk)
        return model(**owner, **values)
    return observation


def stopped_lag(flow: Flow) -> int | None:
    """The lag of a flow whose tasks do not run (paused, failed, unplaced): the source end offsets of the data
    partitions its tasks last reported, minus the positions they reported. A partition reported without a position
    had nothing replicated yet (it was empty while a task held it): a task starts it at the source log start, so
    everything from there on is lag. One batched ListOffsets (two specs when a position is missing). The last
    report may be a little older than the positions the task stored when it stopped, so this can read a few
    records high, never low. None when no partition was reported or the source did not answer."""
    policy = flow_config(flow).policy()
    positions = {
        (topic, partition): expand(topic, partition, values)["position"]
        for topic, partition, values in PartitionReport.objects.filter(flow=flow).values_list(
            "topic", "partition", "snapshot"
        )
        if not is_heartbeats_topic(policy, topic) and not is_internal_topic(topic)
    }
    if not positions:
        return None
    unreplicated = any(position is None for position in positions.values())
    try:
        starts, ends = browse.offsets(browse.admin(flow.source), sorted(positions), earliest=unreplicated)
    except (KafkaException, TimeoutError) as exc:
        log.warning("flow %s: source end offsets not read: %s", flow.name, exc)
        return None
    lag = 0
    for key, end in ends.items():
        position = positions[key] if positions[key] is not None else starts.get(key)
        if end is not None and position is not None:
            lag += max(0, end - position)
    return lag


def _idle_groups(flow: Flow, latest: dict[str, dict[tuple[str, int], Checkpoint]]) -> set[str] | None:
    """The groups that committed nothing on the source since their newest checkpoints: every checkpointed
    partition's committed offset is still the checkpoint's upstream offset. Checkpoints are written only when a
    group's offset moves, so an idle group's checkpoint is old and still current: nothing to checkpoint. One
    OffsetFetch per group, all in flight together. None when the source does not answer: idleness unknown (the
    dashboard shows such groups as not idle; the checkpoint-age alert reads them as no data)."""
    if not latest:
        return set()
    config = flow_config(flow)
    policy = config.policy()
    try:
        offsets = group_offsets(browse.admin(flow.source), sorted(latest), TopicFilter(config), browse.READ_TIMEOUT)
    except (KafkaException, TimeoutError) as exc:
        log.warning("flow %s: source group offsets not read: %s", flow.name, exc)
        return None
    committed = {(o.group, o.topic, o.partition): o.offset for o in offsets}
    return {
        group
        for group, cps in latest.items()
        if all(
            committed.get((group, policy.upstream_topic(topic) or topic, partition)) == cp.upstream_offset
            for (topic, partition), cp in cps.items()
        )
    }


def _freshness(checkpoints: dict[tuple[str, int], Checkpoint], idle: bool | None = False) -> dict[str, object]:
    """The newest checkpoint of the group (how fresh it is), the oldest of its partitions' latest ones, and whether
    the group is idle (nothing committed since: its checkpoints are current however old; None: not known)."""
    stamps = [cp.timestamp for cp in checkpoints.values() if cp.timestamp is not None]
    newest, oldest = (max(stamps), min(stamps)) if stamps else (None, None)
    return {"timestamp": newest, "oldest": oldest, "partitions": len(checkpoints), "idle": idle}
