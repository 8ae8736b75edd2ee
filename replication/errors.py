"""Errors that stop a replication task rather than risk data."""

from __future__ import annotations

from confluent_kafka import KafkaError

# A partition whose leader a client cannot reach yet: a topic or partition created a moment ago, or a leader that
# moved. Waits, not failures, until the caller's deadline. A KRaft broker (Kafka 3.x/4.x) answers offset requests
# for a partition created a moment ago with NOT_LEADER_OR_FOLLOWER until its leadership is applied, where a 2.3.0
# broker with ZooKeeper answered UNKNOWN_TOPIC_OR_PART or LEADER_NOT_AVAILABLE.
LEADER_NOT_READY = (
    KafkaError._UNKNOWN_PARTITION,
    KafkaError.UNKNOWN_TOPIC_OR_PART,
    KafkaError.LEADER_NOT_AVAILABLE,
    KafkaError.NOT_LEADER_FOR_PARTITION,
    KafkaError.FENCED_LEADER_EPOCH,
    KafkaError.UNKNOWN_LEADER_EPOCH,
)


class ReplicationError(RuntimeError):
    """The task cannot go on without risking data: a send failed, or the producer was fenced."""
