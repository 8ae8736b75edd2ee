"""What the sampler reads from the clusters every few seconds: reachability, heartbeat hops and checkpoints.

The graph and the flow page read these rows instead of asking Kafka on every refresh.
"""

from __future__ import annotations

import logging
import re
from datetime import datetime, timedelta
from functools import partial
from typing import Any, TypeVar

from confluent_kafka import KafkaException
from django.conf import settings
from django.db import IntegrityError
from django.db.models import Model
from django.utils import timezone

from controlplane.clusters import browse
from controlplane.clusters.models import Cluster
from controlplane.clusters.services import listing
from controlplane.core import parallel
from controlplane.flows.models import Flow
from controlplane.flows.services import cluster_config, flow_config
from controlplane.monitoring.models import ClusterObservation, FlowObservation
from controlplane.monitoring.services import readers, stopped
from replication.emitters.checkpoints import group_offsets
from replication.mm2.filters import TopicFilter
from replication.mm2.records import Checkpoint

log = logging.getLogger(__name__)
M = TypeVar("M", bound=Model)
# A pass reads every due cluster at once and waits this long at most (a listing's own timeout is 5 s, heartbeats'
# reads 10 s): beat queues one every MIRRORPLANE_OBSERVE_INTERVAL_SECONDS.
OBSERVE_DEADLINE_SECONDS = 12.0


def observe_all(now: datetime | None = None) -> int:
    """Observe every cluster, then the checkpoints of every flow whose target answered; returns clusters seen.

    The clusters are read side by side, all within one deadline, so one that hangs costs the pass no more than that
    deadline (``core.parallel``). A cluster that did not answer is probed again only after a back-off that doubles
    with each failed probe, up to ``MIRRORPLANE_UNREACHABLE_PROBE_MAX_SECONDS``; until then its observation says
    unreachable with the last error, and its flows are not read. Editing the cluster ends the back-off.
    """
    now = now or timezone.now()
    clusters = list(Cluster.objects.all())
    previous = {o.cluster_id: o for o in ClusterObservation.objects.filter(cluster__in=clusters)}
    due = [c for c in clusters if probe_due(c, previous.get(c.pk), now)]
    outcomes = parallel.each_within({c.pk: partial(read_cluster, c) for c in due}, OBSERVE_DEADLINE_SECONDS)
    reachable: set[int] = set()
    for cluster in clusters:
        last = previous.get(cluster.pk)
        if cluster.pk in outcomes:
            outcome = outcomes[cluster.pk]
            values = outcome if isinstance(outcome, dict) else {"reachable": False, "error": _reason(outcome)}
            values = {**values, "at": now, **_backoff(last, bool(values["reachable"]), now)}
            changed = last is None or last.reachable or _said(last.error) != _said(values["error"])
            if not values["reachable"] and changed:
                log.warning("cluster %s unreachable: %s", cluster.alias, values["error"])
            elif values["reachable"] and last is not None and not last.reachable:
                log.info("cluster %s reachable again", cluster.alias)
        else:  # backing off: still unreachable as far as anyone knows, with the last probe's error
            values = {"at": now, "reachable": False}
        if _stored(ClusterObservation, values, cluster=cluster).reachable:
            reachable.add(cluster.pk)
    for flow in Flow.objects.select_related("source", "target").filter(target_id__in=reachable):
        observe_flow(flow, now, source_reachable=flow.source_id in reachable)
    return len(reachable)


def probe_due(cluster: Cluster, last: ClusterObservation | None, now: datetime) -> bool:
    """Whether to ask the cluster this pass: always unless its last probe failed and its back-off runs; an edited
    cluster (another address, other credentials) is asked at once."""
    if last is None or last.reachable or last.next_probe_at is None:
        return True
    return last.next_probe_at <= now or cluster.updated_at > last.at


def _backoff(last: ClusterObservation | None, reachable: bool, now: datetime) -> dict[str, object]:
    if reachable:
        return {"failures": 0, "next_probe_at": None}
    failures = (last.failures if last is not None else 0) + 1
    base = settings.MIRRORPLANE_OBSERVE_INTERVAL_SECONDS
    delay = min(base * 2 ** min(failures - 1, 16), settings.MIRRORPLANE_UNREACHABLE_PROBE_MAX_SECONDS)
    return {"failures": failures, "next_probe_at": now + timedelta(seconds=delay)}


def _said(error: object) -> str:
    """An error's words without its figures ("after 0ms" and "after 1ms" say the same): a change is logged once."""
    return re.sub(r"\d+", "#", str(error))


def _reason(error: BaseException) -> str:
    return str(error) or type(error).__name__


def read_cluster(cluster: Cluster) -> dict[str, object]:
    """What the observation stores of one cluster, read from it (network only: this runs in a reader thread)."""
    check, topics = listing(cluster)  # one metadata request for reachability, hops and heartbeat topics
    values: dict[str, object] = {"reachable": check["ok"], "error": check.get("error", "")}
    values["topic_count"] = check.get("topic_count")
    if check["ok"]:
        values.update(_heartbeats(cluster, topics))
    return values


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
    values: dict[str, object] = {"at": now, "error": "", "stopped_lag": None, "stopped_tasks": []}
    if source_reachable:
        observed = stopped.stopped_lag(flow)
        held = stopped.write_reports(flow, observed, now)  # partitions still reported by a live task count there
        values["stopped_lag"] = None if observed.lag is None else observed.lag - held
        values["stopped_tasks"] = observed.tasks
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
