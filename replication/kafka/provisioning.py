"""Provisioning: a flow's topics exist, and the target's metadata shows them, before any of its tasks starts.

Every task of a flow reads the positions topic at start, and every task produces to remote topics, offset syncs
and checkpoints. If each task created what it needed, a task's start would depend on which task won the race:
the loser's client may not know a partition that another task created a moment ago (`_UNKNOWN_PARTITION`), and
records produced before their remote topic exists log errors. So the runner (standalone) or the controller (the
control plane) provisions once, before the tasks start:

| topic | cluster | when |
|---|---|---|
| `mirrorplane-positions.<source>.internal` | target | always |
| `mm2-offset-syncs.<other>.internal` | `offset-syncs.topic.location` | `emit.offset-syncs.enabled` |
| `<source>.checkpoints.internal` | target | `emit.checkpoints.enabled` |
| `heartbeats` | target and source (where MM2 writes them) | `emit.heartbeats.enabled` |
| remote topics of the matching source topics | target | always |

Creation is idempotent (an existing topic is kept as it is), and provisioning returns only when every topic's
partitions have a leader in a fresh metadata response, or raises `ProvisioningError` at its deadline naming the
topics that are still missing.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, NewTopic

from replication.config import FlowConfig
from replication.errors import ReplicationError, named_refusal
from replication.kafka import positions
from replication.kafka.clients import ClientFactory
from replication.kafka.diagnosis import probe
from replication.kafka.internaltopics import (
    COMPACTED_CONFIG,
    HEARTBEATS_CONFIG,
    OFFSET_SYNCS_CONFIG,
    flow_checkpoints_topic,
    offset_syncs_cluster,
    offset_syncs_topic,
)
from replication.kafka.topicsync import TopicSync, effective_replication_factor
from replication.mm2.policy import HEARTBEATS_TOPIC

log = logging.getLogger(__name__)
DEADLINE_SECONDS = 60.0


class ProvisioningError(ReplicationError):
    """A flow's topics could not be created, or did not appear in the metadata before the deadline."""


@dataclass(frozen=True)
class InternalTopic:
    """One partition, compacted or time-bounded: an internal topic of a flow, and the cluster it lives in."""

    name: str
    cluster: str  # "source" or "target"
    config: dict[str, str] = field(default_factory=dict)
    replication_factor: int = -1  # -1: the cluster's default (min(brokers, 3) on brokers before 2.4)


@dataclass(frozen=True)
class Provisioned:
    """What provisioning found or made: internal topics per cluster role, and the remote topics."""

    internal: tuple[InternalTopic, ...]
    remote_topics: tuple[str, ...]
    seconds: float
    source_topics: Mapping[str, int]  # the source topics the flow replicates, with their partition counts


def internal_topics(flow: FlowConfig) -> list[InternalTopic]:
    """The internal topics a flow's tasks and side emitters use."""
    positions_topic = positions.positions_topic(flow.source.alias)
    topics = [InternalTopic(positions_topic, "target", dict(COMPACTED_CONFIG), flow.replication_factor)]
    if flow.emit_offset_syncs_enabled:
        location = "source" if offset_syncs_cluster(flow) is flow.source else "target"
        topics.append(InternalTopic(offset_syncs_topic(flow), location, dict(OFFSET_SYNCS_CONFIG)))
    if flow.emit_checkpoints_enabled:
        topics.append(InternalTopic(flow_checkpoints_topic(flow), "target", dict(COMPACTED_CONFIG)))
    if flow.emit_heartbeats_enabled:
        # The flow's heartbeats go to the target, the reverse pair's to the source (MM2's two heartbeat herders).
        topics += [InternalTopic(HEARTBEATS_TOPIC, role, dict(HEARTBEATS_CONFIG)) for role in ("target", "source")]
    return topics


def provision_flow(
    flow: FlowConfig,
    clients: ClientFactory | None = None,
    deadline_seconds: float = DEADLINE_SECONDS,
    clock: Callable[[], float] = time.monotonic,
) -> Provisioned:
    """Create the flow's internal and remote topics if missing; return once the metadata shows all of them."""
    clients = clients or ClientFactory()
    started = clock()
    for cluster in (flow.source, flow.target):  # a refused credential is named now, not at the deadline
        reason = probe(cluster)
        if reason is not None:
            raise ProvisioningError(f"{flow.name}: cannot use {cluster.alias}: {reason}")
    deadline = started + deadline_seconds
    admins = {"source": clients.admin(flow.source), "target": clients.admin(flow.target)}
    internal = internal_topics(flow)
    for role, admin in admins.items():
        wanted = [t for t in internal if t.cluster == role]
        if wanted:
            new = [
                NewTopic(t.name, 1, effective_replication_factor(admin, t.replication_factor), config=t.config)
                for t in wanted
            ]
            create_missing(
                admin, new, deadline, clock, cluster=(flow.source if role == "source" else flow.target).alias
            )
    sync = TopicSync(flow, admins["source"], admins["target"])
    sources = sync.source_topics()
    sync.ensure_remote_topics(sources)
    remote = {sync.remote_topic(t): n for t, n in sources.items()}
    # Creating a thousand topics can outlast the deadline on a busy controller: the wait for their metadata gets
    # its own, from here, and a late CreateTopics answer (logged above) is waited for here instead of failing.
    deadline = max(deadline, clock() + deadline_seconds)
    wait_for_metadata(
        admins["target"], {**{t.name: 1 for t in internal if t.cluster == "target"}, **remote}, deadline, clock
    )
    wait_for_metadata(admins["source"], {t.name: 1 for t in internal if t.cluster == "source"}, deadline, clock)
    # Topics made before heartbeats were stamped by their broker; once in the metadata, so that a broker that
    # has not learnt of a topic just created does not answer "unknown topic".
    if flow.emit_heartbeats_enabled:
        sync.stamp_heartbeats(admins["source"], [HEARTBEATS_TOPIC])
    sync.stamp_heartbeats(admins["target"], [*([HEARTBEATS_TOPIC] if flow.emit_heartbeats_enabled else []), *remote])
    seconds = clock() - started
    log.info(
        "%s: provisioned %d internal and %d remote topics in %.1fs", flow.name, len(internal), len(remote), seconds
    )
    return Provisioned(tuple(internal), tuple(sorted(remote)), seconds, sources)


def create_missing(
    admin: AdminClient,
    topics: list[NewTopic],
    deadline: float,
    clock: Callable[[], float] = time.monotonic,
    cluster: str = "the cluster",
) -> list[str]:
    """Create each topic unless it exists; returns the names created by this call. A refusal names the ACL it lacks
    (CREATE on the topic, on `cluster`)."""
    existing = admin.list_topics(timeout=_remaining(deadline, clock)).topics
    new = [t for t in topics if t.topic not in existing]
    if not new:
        return []
    created = []
    for name, future in admin.create_topics(new).items():
        try:
            future.result(timeout=_remaining(deadline, clock))
            created.append(name)
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                error = named_refusal(exc, cluster, "CREATE", name).args[0]
                raise ProvisioningError(f"creating topic {name}: {error.str()}") from exc
        except TimeoutError:  # a busy controller answers late; the caller waits for the topic's metadata
            log.warning("the creation of topic %s was not answered before the deadline; awaiting its metadata", name)
    log.info("created topics %s", created)
    return created


def wait_for_metadata(
    admin: AdminClient, partitions: dict[str, int], deadline: float, clock: Callable[[], float] = time.monotonic
) -> None:
    """Return once every topic has at least its partition count, each with a leader; raise at the deadline."""
    missing = dict(partitions)
    while missing:
        metadata = admin.list_topics(timeout=_remaining(deadline, clock))
        for name, count in list(missing.items()):
            meta = metadata.topics.get(name)
            if meta is None or meta.error is not None or len(meta.partitions) < count:
                continue
            if all(p.leader >= 0 for p in meta.partitions.values()):
                del missing[name]
        if missing and clock() >= deadline:
            raise ProvisioningError(f"topics not in the metadata after the deadline: {sorted(missing)[:10]}")
        if missing:
            time.sleep(0.1)


def _remaining(deadline: float, clock: Callable[[], float]) -> float:
    """Time left for one call; at least a second, so a call at the deadline still gets its answer."""
    return max(1.0, deadline - clock())
