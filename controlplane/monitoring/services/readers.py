"""Reads of replication's internal topics that monitoring and the failover share: heartbeats and checkpoints.

Thin wrappers around replication/'s own readers (TopicTail, read_checkpoints, MirrorClient), each with a
deadline, so an unreachable cluster costs seconds rather than the data plane's long default timeouts.
"""

from __future__ import annotations

from collections.abc import Iterable

from confluent_kafka import KafkaError, KafkaException, TopicPartition

from replication.config import ClusterConfig
from replication.kafka.clients import ClientFactory
from replication.kafka.internaltopics import TopicTail
from replication.mm2 import records
from replication.mm2.policy import DefaultReplicationPolicy, checkpoints_topic, is_heartbeats_topic
from replication.mm2.records import Checkpoint, Heartbeat, LatestCheckpoints, RecordFormatError
from replication.offsets import mirrorclient
from replication.offsets.checkpoints import read_checkpoints

READ_TIMEOUT = 10.0
POLICY = DefaultReplicationPolicy()  # MirrorClient's: a cluster's heartbeat topics are named by the default policy


def newest_heartbeat(cluster: ClusterConfig, topic: str, timeout: float = READ_TIMEOUT) -> Heartbeat | None:
    """The last heartbeat in ``topic`` (partition 0) of the cluster, or None if the topic is empty or missing."""
    consumer = ClientFactory().consumer(cluster, "ui-heartbeats")
    try:
        try:
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=timeout)
        except KafkaException as exc:
            if exc.args[0].code() in (KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError._UNKNOWN_PARTITION):
                return None
            raise
        if high <= low:
            return None
        consumer.assign([TopicPartition(topic, 0, high - 1)])
        for msg in consumer.consume(1, timeout):
            if msg.error() is None:
                return _heartbeat(msg.key(), msg.value())
        return None
    finally:
        consumer.close()


def _heartbeat(key: bytes | None, value: bytes | None) -> Heartbeat | None:
    try:
        return Heartbeat.from_bytes(key, value)
    except RecordFormatError:
        return None


def heartbeat_topics(topics: Iterable[str]) -> set[str]:
    """The heartbeat topics among a cluster's topics, read by MirrorClient's (the default) replication policy."""
    return {t for t in topics if is_heartbeats_topic(POLICY, t)}


def upstream_hops(topics: Iterable[str]) -> dict[str, int]:
    """Every cluster heartbeats came from, with the fewest hops they took to reach the cluster of these topics."""
    return mirrorclient.upstream_hops(POLICY, topics)


def checkpoints(target: ClusterConfig, source_alias: str, timeout: float = READ_TIMEOUT) -> list[Checkpoint]:
    """Every checkpoint in ``<source alias>.checkpoints.internal`` on the target, oldest first."""
    tail = TopicTail(
        ClientFactory().consumer(target, f"ui-checkpoints-{source_alias}"), checkpoints_topic(source_alias)
    )
    try:
        return read_checkpoints(tail, timeout)
    finally:
        tail.close()


def latest_checkpoints(target: ClusterConfig, source_alias: str) -> LatestCheckpoints:
    """group -> (remote topic, partition) -> its newest checkpoint."""
    return records.latest_checkpoints(checkpoints(target, source_alias))
