"""MirrorClient: what one cluster can tell about the flows into it (MM2's MirrorClient and RemoteClusterUtils).

Reachability comes from heartbeat topic names (`backup.us-west.heartbeats`: us-west is two hops upstream; a
cluster's own `heartbeats`, where flows into it write theirs, counts no hop), offsets from the checkpoint
topics. Like MM2's, it reads remote topic names with the replication policy, the default policy unless told
otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable

from confluent_kafka.admin import AdminClient

from replication.config import ClusterConfig
from replication.kafka.clients import ClientFactory
from replication.kafka.internaltopics import TIMEOUT, TopicTail
from replication.mm2.policy import (
    DefaultReplicationPolicy,
    ReplicationPolicy,
    checkpoints_topic,
    is_heartbeats_topic,
    source_chain,
)
from replication.mm2.records import latest_checkpoints
from replication.offsets.checkpoints import read_checkpoints


def hops_for_topic(policy: ReplicationPolicy, topic: str, upstream: str) -> int:
    """Hops from upstream to the cluster holding this remote topic, or -1 if it did not come from there."""
    chain = source_chain(policy, topic)
    return chain.index(upstream) + 1 if upstream in chain else -1


def replication_hops(policy: ReplicationPolicy, topics: Iterable[str], upstream: str) -> int:
    """MM2's replicationHops: the fewest hops over all heartbeat topics, -1 if upstream is not reachable."""
    hops = [hops_for_topic(policy, t, upstream) for t in topics if is_heartbeats_topic(policy, t)]
    return min((h for h in hops if h > 0), default=-1)


def upstream_clusters(policy: ReplicationPolicy, topics: Iterable[str]) -> set[str]:
    """Every cluster some heartbeat topic passed through on its way here."""
    return {alias for t in topics if is_heartbeats_topic(policy, t) for alias in source_chain(policy, t)}


def upstream_hops(policy: ReplicationPolicy, topics: Iterable[str]) -> dict[str, int]:
    """Every cluster heartbeats came from, with the fewest hops they took to reach the cluster holding topics."""
    topics = list(topics)
    return {alias: replication_hops(policy, topics, alias) for alias in sorted(upstream_clusters(policy, topics))}


def remote_topics(policy: ReplicationPolicy, topics: Iterable[str], source: str | None = None) -> set[str]:
    """The remote topics among topics (from source, if given), heartbeats included, internal topics excluded."""
    found = set()
    for topic in topics:
        origin = policy.topic_source(topic)
        if origin is not None and (source is None or origin == source) and not topic.endswith(".internal"):
            found.add(topic)
    return found


class MirrorClient:
    """A client of one cluster that reads the replication flows into it: hops, upstream clusters, offsets."""

    def __init__(
        self,
        cluster: ClusterConfig,
        policy: ReplicationPolicy | None = None,
        clients: ClientFactory | None = None,
        timeout: float = TIMEOUT,
    ) -> None:
        self.cluster = cluster
        self.timeout = timeout
        self.policy = policy or DefaultReplicationPolicy()
        self.clients = clients or ClientFactory()
        self._admin: AdminClient = self.clients.admin(cluster)

    def topics(self) -> set[str]:
        metadata = self._admin.list_topics(timeout=self.timeout)
        return {name for name, meta in metadata.topics.items() if meta.error is None}

    def replication_hops(self, upstream: str) -> int:
        return replication_hops(self.policy, self.topics(), upstream)

    def heartbeat_topics(self) -> set[str]:
        return {t for t in self.topics() if is_heartbeats_topic(self.policy, t)}

    def upstream_clusters(self) -> set[str]:
        return upstream_clusters(self.policy, self.topics())

    def remote_topics(self, source: str | None = None) -> set[str]:
        """Topics replicated here (from source, if given), heartbeats included, internal topics excluded."""
        return remote_topics(self.policy, self.topics(), source)

    def remote_consumer_offsets(
        self, group: str, remote_alias: str, timeout: float = TIMEOUT
    ) -> dict[tuple[str, int], int]:
        """Where group should resume here, per (remote topic, partition): its latest checkpoints from remote_alias."""
        topic = checkpoints_topic(remote_alias)
        tail = TopicTail(self.clients.consumer(self.cluster, f"mirrorclient-{remote_alias}"), topic)
        try:
            checkpoints = read_checkpoints(tail, timeout)
        finally:
            tail.close()
        latest = latest_checkpoints(checkpoints).get(group, {})
        return {tp: cp.downstream_offset for tp, cp in latest.items()}
