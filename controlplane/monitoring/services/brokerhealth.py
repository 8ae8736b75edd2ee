"""Broker health of each cluster: brokers up, the active controller, and the partitions at risk, counted by the
rules ``kafka-topics.sh --describe`` applies for its ``--under-replicated-partitions``, ``--unavailable-partitions``
and ``--under-min-isr-partitions`` filters (Kafka's ``TopicCommand.PartitionDescription``):

- under-replicated: fewer in-sync replicas than assigned replicas;
- offline: no leader, or a leader that is not among the brokers in the metadata;
- under min ISR: no leader, or fewer in-sync replicas than the topic's ``min.insync.replicas`` as
  ``describe_configs`` reports it (the topic's own value, else the broker's or the default one).

The beat job ``cluster-observations`` reads these after the observer's own pass (``observe.observe_all``), every
cluster it found reachable side by side within one deadline, and writes one ``BrokerHealth`` row per cluster
afterwards, outside any transaction; the API and the pages read those rows and never a broker.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, ClusterMetadata, ConfigResource
from django.db import IntegrityError
from django.utils import timezone

from controlplane.clusters import browse
from controlplane.clusters.models import Cluster
from controlplane.core import parallel
from controlplane.monitoring.models import BrokerHealth, ClusterObservation

log = logging.getLogger(__name__)
DEADLINE_SECONDS = 12.0
EXAMPLES = 20  # partitions named per figure: enough to start looking, bounded however many are at risk
MIN_ISR = "min.insync.replicas"


@dataclass(frozen=True)
class PartitionState:
    """One partition as the cluster's metadata describes it; ``leader`` -1 when it has none."""

    topic: str
    partition: int
    leader: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]


@dataclass
class Figures:
    """The partitions counted under each figure (``topic-partition`` names, all of them)."""

    partitions: int = 0
    under_replicated: list[str] = field(default_factory=list)
    offline: list[str] = field(default_factory=list)
    under_min_isr: list[str] = field(default_factory=list)


def classify(partitions: Iterable[PartitionState], brokers: set[int], min_isr: Mapping[str, int] | None) -> Figures:
    """Each partition counted by the ``kafka-topics.sh`` rules; ``min_isr`` topic -> value, or None when the topics'
    configs could not be read (then nothing is counted under min ISR, and the caller reports that figure as no
    data). A topic missing from ``min_isr`` counts under min ISR only when it has no leader."""
    figures = Figures()
    for p in sorted(partitions, key=lambda p: (p.topic, p.partition)):
        name = f"{p.topic}-{p.partition}"
        figures.partitions += 1
        led = p.leader >= 0
        if len(p.isr) < len(p.replicas):
            figures.under_replicated.append(name)
        if not led or p.leader not in brokers:
            figures.offline.append(name)
        required = (min_isr or {}).get(p.topic)
        if min_isr is not None and (not led or (required is not None and len(p.isr) < required)):
            figures.under_min_isr.append(name)
    return figures


def read(cluster: Cluster) -> dict[str, object]:
    """The row's values, read from the cluster (network only: this runs in a reader thread). Raises when the
    metadata itself cannot be read; a failed DescribeCluster or DescribeConfigs costs only its own figure."""
    client = browse.admin(cluster)
    metadata = client.list_topics(timeout=browse.READ_TIMEOUT)
    brokers = set(metadata.brokers)
    notes: list[str] = []
    controller = _controller(client, metadata, notes)
    states = list(_states(metadata))
    min_isr = _min_isr(client, sorted({s.topic for s in states}), notes)
    figures = classify(states, brokers, min_isr)
    return {
        "error": "; ".join(notes),
        "brokers": sorted(brokers),
        "controller_id": controller,
        "partitions": figures.partitions,
        "under_replicated": len(figures.under_replicated),
        "offline": len(figures.offline),
        "under_min_isr": None if min_isr is None else len(figures.under_min_isr),
        "examples": {
            "under_replicated": figures.under_replicated[:EXAMPLES],
            "offline": figures.offline[:EXAMPLES],
            "under_min_isr": figures.under_min_isr[:EXAMPLES],
        },
    }


def _controller(client: AdminClient, metadata: ClusterMetadata, notes: list[str]) -> int | None:
    """The active controller as DescribeCluster names it; a cluster older than Kafka 2.8 has no DescribeCluster,
    and then the metadata's controller id is the answer (-1 there: none known)."""
    try:
        described = client.describe_cluster(request_timeout=browse.READ_TIMEOUT).result()
    except (KafkaException, TimeoutError) as exc:
        notes.append(f"controller from the metadata (DescribeCluster failed: {exc})")
        found = metadata.controller_id
        return found if found >= 0 else None
    return None if described.controller is None else int(described.controller.id)


def _states(metadata: ClusterMetadata) -> Iterable[PartitionState]:
    for name, topic in metadata.topics.items():
        if topic.error is not None:
            continue
        for number, p in topic.partitions.items():
            yield PartitionState(name, number, p.leader, tuple(p.replicas), tuple(p.isrs))


def _min_isr(client: AdminClient, topics: list[str], notes: list[str]) -> dict[str, int] | None:
    """topic -> its effective ``min.insync.replicas``, from one DescribeConfigs request for every topic. A topic
    whose configs were refused or that was deleted meanwhile is left out (counted under min ISR only when it has no
    leader) and the notes say how many; None when no topic's configs could be read (then under min ISR is no
    data, with the reason in the notes)."""
    if not topics:
        return {}
    resources = [ConfigResource(ConfigResource.Type.TOPIC, t) for t in topics]
    found: dict[str, int] = {}
    failed: list[str] = []
    try:
        described = client.describe_configs(resources, request_timeout=browse.READ_TIMEOUT)
    except (KafkaException, ValueError) as exc:
        notes.append(f"{MIN_ISR} not read: {exc}")
        return None
    for resource, future in described.items():
        try:
            entry = future.result(timeout=browse.READ_TIMEOUT + 2.0).get(MIN_ISR)
            if entry is not None and entry.value is not None:
                found[resource.name] = int(entry.value)
        except (KafkaException, TimeoutError, ValueError) as exc:
            failed.append(f"{resource.name}: {exc}")
    if failed and not found:
        notes.append(f"{MIN_ISR} not read: {failed[0]}")
        return None
    if failed:
        notes.append(f"{MIN_ISR} not read for {len(failed)} of {len(topics)} topics (first: {failed[0]})")
    return found


def observe_all(now: datetime | None = None) -> int:
    """Read and store the broker health of every cluster the observer's last pass found reachable."""
    now = now or timezone.now()
    clusters = list(Cluster.objects.all())
    reachable = set(ClusterObservation.objects.filter(reachable=True).values_list("cluster_id", flat=True))
    return observe(clusters, reachable, now)


def observe(clusters: list[Cluster], reachable: set[int], now: datetime) -> int:
    """Read and store the broker health of every reachable cluster; an unreachable one's row keeps the brokers it
    had and says why its figures are no data. Returns the clusters whose health was read."""
    asked = [c for c in clusters if c.pk in reachable]
    outcomes = parallel.each_within({c.pk: partial(read, c) for c in asked}, DEADLINE_SECONDS)
    previous = {h.cluster_id: h for h in BrokerHealth.objects.filter(cluster__in=clusters)}
    read_count = 0
    for cluster in clusters:
        outcome = outcomes.get(cluster.pk)
        if isinstance(outcome, dict):
            values, read_count = outcome, read_count + 1
        else:
            reason = "cluster unreachable" if outcome is None else f"broker health not read: {outcome or 'timeout'}"
            if outcome is not None:
                log.warning("cluster %s: %s", cluster.alias, reason)
            values = {**NO_DATA, "error": reason}
        _store(cluster, previous.get(cluster.pk), {**values, "at": now})
    return read_count


NO_DATA: dict[str, object] = {
    "brokers": [],
    "controller_id": None,
    "partitions": None,
    "under_replicated": None,
    "offline": None,
    "under_min_isr": None,
    "examples": {},
}


def _store(cluster: Cluster, last: BrokerHealth | None, values: dict[str, object]) -> None:
    """Written over the cluster's last row. The brokers it had are those seen since it was last edited (another
    address may be another cluster): a broker seen once and missing now counts as down."""
    known: set[int] = set()
    if last is not None and cluster.updated_at <= last.at:
        known = set(last.known_brokers)
    seen = values["brokers"]
    assert isinstance(seen, list)
    values["known_brokers"] = sorted(known | set(seen))
    try:
        BrokerHealth.objects.update_or_create(cluster=cluster, defaults=values)
    except IntegrityError:
        log.info("cluster %s was deleted while its broker health was read; the reading is dropped", cluster.pk)


def figures(health: BrokerHealth | None) -> dict[str, object]:
    """What the API and the pages show of a row: each figure, null with a reason when there is no data."""
    if health is None:
        return {**_EMPTY, "reason": "no data: not observed yet"}
    read_ok = health.partitions is not None
    up = len(health.brokers) if read_ok else None
    down = len(set(health.known_brokers) - set(health.brokers)) if read_ok else None
    reason = health.error if not read_ok or health.under_min_isr is None else ""
    return {
        "at": health.at,
        "brokers_up": up,
        "brokers_known": len(health.known_brokers),
        "brokers_down": down,
        "brokers": health.brokers,
        "missing_brokers": sorted(set(health.known_brokers) - set(health.brokers)) if read_ok else [],
        "controller_id": health.controller_id,
        "partitions": health.partitions,
        "under_replicated": health.under_replicated,
        "offline": health.offline,
        "under_min_isr": health.under_min_isr,
        "examples": health.examples,
        "reason": f"no data: {reason}" if reason else "",
    }


_EMPTY: dict[str, object] = {
    "at": None,
    "brokers_up": None,
    "brokers_known": 0,
    "brokers_down": None,
    "brokers": [],
    "missing_brokers": [],
    "controller_id": None,
    "partitions": None,
    "under_replicated": None,
    "offline": None,
    "under_min_isr": None,
    "examples": {},
}
