"""Helpers for tests against real Kafka: unique names, admin shortcuts and waits with deadlines."""

from __future__ import annotations

import itertools
import os
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from replication.errors import LEADER_NOT_READY

T = TypeVar("T")
_counter = itertools.count()


def unique_topic(prefix: str = "t") -> str:
    """A topic name no other test (or earlier run against reused clusters) has used."""
    return f"{prefix}-{os.getpid()}-{next(_counter)}-{uuid.uuid4().hex[:6]}"


def wait_until(condition: Callable[[], T], timeout: float = 30.0, interval: float = 0.1, what: str = "") -> T:
    """Poll condition until it returns something truthy; fail with `what` at the deadline."""
    deadline = time.monotonic() + timeout
    last: T = condition()
    while not last:
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what or condition}")
        time.sleep(interval)
        last = condition()
    return last


def admin(bootstrap: str | Mapping[str, str]) -> AdminClient:
    """An admin client of a bootstrap string, or of full client settings (a secured cluster's)."""
    config = {"bootstrap.servers": bootstrap} if isinstance(bootstrap, str) else dict(bootstrap)
    return AdminClient(dict[str, Any](config))


def create_topic(bootstrap: str, name: str, partitions: int = 1, config: dict[str, str] | None = None) -> None:
    client = admin(bootstrap)  # keep the handle alive until the future resolves
    client.create_topics([NewTopic(name, partitions, 1, config=config or {})])[name].result(timeout=30)
    wait_until(lambda: topic_partitions(bootstrap, name) == partitions, what=f"metadata of {name}")


def small_segment_config(bootstrap: str, segment_bytes: int) -> dict[str, str]:
    """The topic config that rolls segments every segment_bytes, for compaction tests. Kafka 4 refuses a
    segment.bytes under 1 MiB (INVALID_CONFIG, "Value must be at least 1048576") and takes internal.segment.bytes
    instead, a config older brokers refuse as unknown: the broker is asked, with a throwaway topic."""
    probe = unique_topic("segment-probe")
    client = admin(bootstrap)
    try:
        client.create_topics([NewTopic(probe, 1, 1, config={"segment.bytes": str(segment_bytes)})], validate_only=True)[
            probe
        ].result(timeout=30)
    except KafkaException as exc:
        if exc.args[0].code() != KafkaError.INVALID_CONFIG:
            raise
        return {"internal.segment.bytes": str(segment_bytes)}
    return {"segment.bytes": str(segment_bytes)}


def topic_partitions(bootstrap: str, name: str) -> int:
    topics = admin(bootstrap).list_topics(timeout=10).topics
    meta = topics.get(name)
    if meta is None or meta.error is not None:
        return 0
    return len(meta.partitions)


def end_offsets(bootstrap: str, topic: str, partitions: Iterable[int], timeout: float = 30.0) -> dict[int, int]:
    """The partitions' end offsets. A partition created a moment ago (a remote topic the engine just made) may have
    no leader a client can reach yet: a KRaft broker answers NOT_LEADER_OR_FOLLOWER until its leadership is applied,
    and that is asked again, to a deadline, as the engine does (replication.errors.LEADER_NOT_READY)."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "mp-test-probe", "enable.auto.commit": False})
    deadline = time.monotonic() + timeout
    try:
        result = {}
        for p in partitions:
            while True:
                try:
                    result[p] = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
                    break
                except KafkaException as exc:
                    if exc.args[0].code() not in LEADER_NOT_READY or time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)
        return result
    finally:
        consumer.close()


def consume_all(
    bootstrap: str,
    topic: str,
    partitions: int,
    expected: int,
    timeout: float = 60.0,
    isolation: str = "read_uncommitted",
) -> list[Message]:
    """Read from the beginning of every partition until `expected` records arrived (or fail at the deadline)."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"mp-test-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
            "isolation.level": isolation,
            "fetch.queue.backoff.ms": 10,
        }
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    records: list[Message] = []
    deadline = time.monotonic() + timeout
    try:
        while len(records) < expected and time.monotonic() < deadline:
            for msg in consumer.consume(10000, timeout=0.5):
                if msg.error():
                    raise KafkaException(msg.error())
                records.append(msg)
    finally:
        consumer.close()
    if len(records) < expected:
        raise AssertionError(f"{topic}: got {len(records)} of {expected} records before the deadline")
    return records


def consume_to_end(
    bootstrap: str, topic: str, partitions: int, isolation: str = "read_uncommitted", timeout: float = 120.0
) -> list[Message]:
    """Every record up to each partition's end (the last stable offset under read_committed)."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"mp-test-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
            "isolation.level": isolation,
            "enable.partition.eof": True,
            "fetch.queue.backoff.ms": 10,
        }
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    records: list[Message] = []
    at_end: set[int] = set()
    deadline = time.monotonic() + timeout
    try:
        while len(at_end) < partitions:
            if time.monotonic() > deadline:
                raise AssertionError(f"{topic}: not at the end of {partitions - len(at_end)} partitions in time")
            for msg in consumer.consume(10000, timeout=0.5):
                error = msg.error()
                if error is None:
                    records.append(msg)
                    at_end.discard(msg.partition() or 0)
                elif error.code() == KafkaError._PARTITION_EOF:
                    at_end.add(msg.partition() or 0)
                else:
                    raise KafkaException(error)
    finally:
        consumer.close()
    return records
