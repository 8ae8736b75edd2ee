"""PositionStore: replicated source positions, kept in the TARGET cluster (KIP-3: the target is the truth).

Topic `mirrorplane-positions.<source alias>.internal`, compacted, one record per source topic-partition.
Key: JSON [topic, partition]. Value: JSON {"next": next source offset to replicate, "hw": source end offset
seen when it was written, "down": target offset that follows the task's last acknowledged record, "remote": the
target topic "down" is an offset of}. A position is
written only after the target acknowledged every record before it (at-least-once), or inside the same transaction
as those records (exactly-once). "down" is written at least once only (replication.task.resume reads it back to skip
what the target already holds after a crash); records of older versions, and exactly-once ones, have none. The key
names the source partition only, so flows of one source and target share it: "remote" keeps a position written for
another remote topic (another replication policy, before or beside this one) from being read as this one's.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Consumer, IsolationLevel, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from replication.clientlog import logged
from replication.errors import LEADER_NOT_READY

TopicPartitionKey = tuple[str, int]


def positions_topic(source_alias: str) -> str:
    return f"mirrorplane-positions.{source_alias}.internal"


@dataclass(frozen=True)
class Position:
    """Where replication of one source partition resumes, the source end offset when it was stored, and the
    target offset after the last record acknowledged before `next_offset` in the target topic `remote` (None: not
    known)."""

    next_offset: int
    high_watermark: int
    downstream: int | None = None
    remote: str | None = None


def encode(key: TopicPartitionKey, position: Position) -> tuple[bytes, bytes]:
    value: dict[str, int | str] = {"next": position.next_offset, "hw": position.high_watermark}
    if position.downstream is not None and position.remote is not None:
        value["down"], value["remote"] = position.downstream, position.remote
    return json.dumps([key[0], key[1]]).encode(), json.dumps(value).encode()


def decode(key: bytes, value: bytes) -> tuple[TopicPartitionKey, Position]:
    topic, partition = json.loads(key)
    data = json.loads(value)
    down, remote = data.get("down"), data.get("remote")
    if down is None or remote is None:
        return (str(topic), int(partition)), Position(int(data["next"]), int(data["hw"]))
    position = Position(int(data["next"]), int(data["hw"]), int(down), str(remote))
    return (str(topic), int(partition)), position


def load(consumer_config: dict[str, Any], topic: str, timeout: float = 60.0) -> dict[TopicPartitionKey, Position]:
    """Read the whole topic (read_committed) and keep the latest position per key.

    "The whole topic" ends at its last stable offset, read once at the start: exactly-once tasks of the same source
    and target write their positions here in transactions, and while they copy one is almost always open. A reader
    that waited for the end of the partition waited for a moment with none open (30-60 s with five runners sharing
    two clusters). A position committed after the read began is missed: the partition then resumes from an older
    one, behind every acknowledgement, and exact resume recognises what was copied since."""
    config = {
        **consumer_config,
        "isolation.level": "read_committed",
        "enable.partition.eof": True,
        "auto.offset.reset": "earliest",
    }
    consumer = Consumer(logged(config))
    positions: dict[TopicPartitionKey, Position] = {}
    deadline = time.monotonic() + timeout
    try:
        low, high = _watermarks(consumer, topic, deadline)
        if high <= low:
            return positions  # a new flow: no wait for the partition EOF (0.5 s of every first start)
        end = _stable_end(consumer_config, topic, deadline)
        if end <= low:
            return positions
        tp = TopicPartition(topic, 0, low)
        consumer.assign([tp])
        while time.monotonic() < deadline:
            msg = consumer.poll(0.1)
            if msg is None:
                if consumer.position([TopicPartition(topic, 0)])[0].offset >= end:  # past commit markers too
                    return positions
                continue
            error = msg.error()
            if error is not None:
                if error.code() == KafkaError._PARTITION_EOF:
                    return positions
                raise KafkaException(error)
            key, value = msg.key(), msg.value()
            if key is not None and value is not None:
                tp_key, position = decode(key, value)
                positions[tp_key] = position
            if (msg.offset() or 0) + 1 >= end:
                return positions
        raise TimeoutError(f"{topic}: positions not read to the end within {timeout}s")
    finally:
        consumer.close()


_CONSUMER_ONLY = ("group.id", "enable.auto.commit", "isolation.level", "enable.partition.eof", "auto.offset.reset")


def _stable_end(consumer_config: dict[str, Any], topic: str, deadline: float) -> int:
    """The partition's last stable offset: below it every transaction is committed or aborted."""
    admin = AdminClient(logged({k: v for k, v in consumer_config.items() if k not in _CONSUMER_ONLY}))
    spec = {TopicPartition(topic, 0): OffsetSpec.latest()}  # type: ignore[no-untyped-call]  # confluent-kafka: unannotated
    futures = admin.list_offsets(spec, isolation_level=IsolationLevel.READ_COMMITTED)
    remaining = max(1.0, deadline - time.monotonic())
    return int(next(iter(futures.values())).result(timeout=remaining).offset)


def _watermarks(consumer: Consumer, topic: str, deadline: float) -> tuple[int, int]:
    """The topic's offsets, waiting until this client's metadata knows its partition and its leader answers.

    A topic created a moment ago (by the runner, the controller or another task) may not be in this client's
    metadata yet: that is a wait, not an error, until the deadline.
    """
    while True:
        remaining = max(1.0, deadline - time.monotonic())
        try:
            low, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=min(10.0, remaining))
            return int(low), int(high)
        except KafkaException as exc:
            if exc.args[0].code() not in LEADER_NOT_READY:
                raise
            if time.monotonic() >= deadline:
                raise TimeoutError(f"{topic}: partition 0 not in the target's metadata: {exc.args[0].str()}") from exc
        consumer.list_topics(topic, timeout=min(10.0, remaining))  # asks the broker again
        time.sleep(0.1)


def write(producer: Producer, topic: str, positions: Iterable[tuple[TopicPartitionKey, Position]]) -> None:
    """Produce position records; their delivery is covered by the caller's flush or transaction."""
    for tp, position in positions:
        key, value = encode(tp, position)
        producer.produce(topic, value=value, key=key, partition=0)
