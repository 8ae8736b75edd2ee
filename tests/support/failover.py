"""Failover test helpers: a consumer group that reads part of a topic and commits, and the record-by-record check
that, after the failover, the group reads on the target exactly what it had not read yet on the source."""

from __future__ import annotations

import time
from dataclasses import dataclass

from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, KafkaError, KafkaException, TopicPartition

from tests.support.kafka import admin, consume_to_end

Values = dict[int, list[bytes]]


def group_member(bootstrap: str, group: str, eof: bool = False, protocol: str = "classic") -> Consumer:
    """A consumer in group. protocol "consumer" joins with KIP-848's consumer group protocol (Kafka 4 brokers; the
    broker assigns the partitions and owns the session timeout, so the classic session setting is left out)."""
    config: dict[str, object] = {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "enable.partition.eof": eof,
        "fetch.queue.backoff.ms": 10,
        "group.protocol": protocol,
    }
    if protocol == "classic":
        config["session.timeout.ms"] = 6000
    return Consumer(config)


def consume_and_commit(
    bootstrap: str, group: str, topic: str, count: int, timeout: float = 60.0, protocol: str = "classic"
) -> Values:
    """Read ``count`` records as the group, commit where it got to, and leave the group (values per partition)."""
    consumer = group_member(bootstrap, group, protocol=protocol)
    consumer.subscribe([topic])
    got: Values = {}
    deadline = time.monotonic() + timeout
    try:
        while sum(map(len, got.values())) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"{group}: read {sum(map(len, got.values()))} of {count} in time")
            for msg in consumer.consume(min(500, count - sum(map(len, got.values()))), 0.5):
                if msg.error():
                    raise KafkaException(msg.error())
                got.setdefault(msg.partition() or 0, []).append(msg.value() or b"")
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    return got


def read_rest(bootstrap: str, group: str, topic: str, partitions: int, timeout: float = 60.0) -> Values:
    """Everything the group reads from its committed offsets to the end of each partition (nothing committed)."""
    consumer = group_member(bootstrap, group, eof=True)
    consumer.subscribe([topic])
    got: Values = {p: [] for p in range(partitions)}
    at_end: set[int] = set()
    deadline = time.monotonic() + timeout
    try:
        while len(at_end) < partitions:
            if time.monotonic() > deadline:
                raise AssertionError(f"{group}: {topic} not read to the end in time")
            for msg in consumer.consume(1000, 0.5):
                error = msg.error()
                if error is not None and error.code() == KafkaError._PARTITION_EOF:
                    at_end.add(msg.partition() or 0)
                elif error is not None:
                    raise KafkaException(error)
                else:
                    got[msg.partition() or 0].append(msg.value() or b"")
    finally:
        consumer.close()
    return got


def committed(bootstrap: str, group: str, topic: str, partitions: int) -> dict[int, int]:
    request = [ConsumerGroupTopicPartitions(group, [TopicPartition(topic, p) for p in range(partitions)])]
    client = admin(bootstrap)  # keep the handle alive until the future resolves
    result = client.list_consumer_group_offsets(request)[group].result(timeout=30)
    return {tp.partition: tp.offset for tp in result.topic_partitions}


def values_from(bootstrap: str, topic: str, positions: dict[int, int]) -> Values:
    """The values of each partition from the given position to its end."""
    records = consume_to_end(bootstrap, topic, len(positions))
    found: Values = {p: [] for p in positions}
    for msg in sorted(records, key=lambda m: (m.partition() or 0, m.offset() or 0)):
        partition = msg.partition() or 0
        if (msg.offset() or 0) >= positions[partition]:
            found[partition].append(msg.value() or b"")
    return found


@dataclass(frozen=True)
class Exactness:
    """Record-by-record comparison of what the group read on the target with what it had left to read."""

    reread: int  # records read on the target that the group had already read on the source
    skipped: int  # records the group had left to read and did not get on the target
    in_order: bool  # every partition read exactly the expected records, in order
    expected: int


def exactness(already: Values, expected_rest: Values, read_on_target: Values) -> Exactness:
    reread = sum(1 for p, got in read_on_target.items() for v in got if v in set(already.get(p, [])))
    skipped = sum(len(set(want) - set(read_on_target.get(p, []))) for p, want in expected_rest.items())
    in_order = all(read_on_target.get(p, []) == want for p, want in expected_rest.items())
    return Exactness(reread, skipped, in_order, sum(map(len, expected_rest.values())))
