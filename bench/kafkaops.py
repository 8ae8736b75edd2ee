"""Admin and offset helpers the benchmarks need: topics made and removed with waits, end offsets, record counts."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Iterable
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

_quiet = logging.getLogger("bench.librdkafka")
_quiet.addHandler(logging.NullHandler())
_quiet.propagate = False
TIMEOUT = 30.0
NOT_LEADER = (KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE)


class BenchError(RuntimeError):
    """A benchmark could not set up, run or finish a measurement."""


def wait_for(condition: Callable[[], bool], timeout: float, what: str, interval: float = 0.1) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise BenchError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)


def admin(bootstrap: str) -> AdminClient:
    config: dict[str, Any] = {"bootstrap.servers": bootstrap, "logger": _quiet}
    return AdminClient(config)


def probe_consumer(bootstrap: str, **settings: Any) -> Consumer:
    """A consumer that never joins a group: for watermarks and manually assigned reads."""
    config = {
        "bootstrap.servers": bootstrap,
        "group.id": f"bench-probe-{uuid.uuid4().hex[:8]}",
        "enable.auto.commit": False,
        "fetch.queue.backoff.ms": 10,
        "logger": _quiet,
        **settings,
    }
    return Consumer(config)


def topic_partitions(bootstrap: str, topic: str) -> int:
    """Partition count of topic, 0 if it does not exist (or is being deleted)."""
    meta = admin(bootstrap).list_topics(topic, timeout=TIMEOUT).topics.get(topic)
    if meta is None or meta.error is not None:
        return 0
    return len(meta.partitions)


def create_topic(
    bootstrap: str, topic: str, partitions: int, config: dict[str, str] | None = None, exists_timeout: float = 60
) -> None:
    """Create topic; for exists_timeout, TOPIC_ALREADY_EXISTS is taken for a deletion still in progress."""
    client = admin(bootstrap)
    deadline = time.monotonic() + exists_timeout
    while True:
        try:
            client.create_topics([NewTopic(topic, partitions, 1, config=config or {})])[topic].result(timeout=TIMEOUT)
            break
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS or time.monotonic() > deadline:
                raise
            time.sleep(0.5)
    wait_for(lambda: topic_partitions(bootstrap, topic) == partitions, TIMEOUT, f"metadata of {topic}")


def delete_topics(bootstrap: str, topics: Iterable[str], wait: bool = True) -> None:
    """Delete the topics that exist; with wait, until the broker no longer lists them (deletion is asynchronous)."""
    client = admin(bootstrap)
    existing = set(client.list_topics(timeout=TIMEOUT).topics)
    doomed = [t for t in topics if t in existing]
    if not doomed:
        return
    for topic, future in client.delete_topics(doomed, operation_timeout=TIMEOUT).items():
        try:
            future.result(timeout=TIMEOUT)
        except KafkaException as exc:
            if exc.args[0].code() != KafkaError.UNKNOWN_TOPIC_OR_PART:
                raise BenchError(f"cannot delete {topic}: {exc}") from exc
    if wait:
        wait_for(lambda: not set(doomed) & set(client.list_topics(timeout=TIMEOUT).topics), 60, f"deletion of {doomed}")


class Watermarks:
    """Low and high offsets of one topic's partitions, read by a long-lived consumer (cheap to poll)."""

    def __init__(self, bootstrap: str, topic: str, partitions: int, isolation: str = "read_uncommitted") -> None:
        self.topic = topic
        self.partitions = partitions
        self.consumer = probe_consumer(bootstrap, **{"isolation.level": isolation})

    def offsets(self) -> list[tuple[int, int]]:
        """(low, high) per partition; (0, 0) for every partition while the topic does not exist yet. A partition
        whose leader is not yet known to the client (a topic just created) is asked again for up to 10 s."""
        deadline = time.monotonic() + 10
        while True:
            try:
                return self._query()
            except KafkaException as exc:
                code = exc.args[0].code()
                if code in (KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError._UNKNOWN_PARTITION):
                    return [(0, 0)] * self.partitions
                if code not in NOT_LEADER or time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def existing_offsets(self, timeout: float = 60.0) -> list[tuple[int, int]]:
        """(low, high) per partition of a topic that exists; retried while a broker that just started loads it."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                return self._query()
            except KafkaException:
                if time.monotonic() > deadline:
                    raise
                self.consumer.list_topics(self.topic, timeout=10)  # refresh the client's metadata
                time.sleep(0.5)

    def _query(self) -> list[tuple[int, int]]:
        return [
            self.consumer.get_watermark_offsets(TopicPartition(self.topic, p), timeout=10)
            for p in range(self.partitions)
        ]

    def end_sum(self) -> int:
        return sum(high for _, high in self.offsets())

    def close(self) -> None:
        self.consumer.close()


def count_records(bootstrap: str, topic: str, partitions: int, isolation: str = "read_committed") -> int:
    """Every record a consumer sees from the beginning to the end offsets (transaction markers are not records)."""
    count = 0

    def one(_: Message) -> None:
        nonlocal count
        count += 1

    read_to_end(bootstrap, topic, partitions, isolation, one)
    return count


def read_to_end(
    bootstrap: str, topic: str, partitions: int, isolation: str, each: Callable[[Message], None], timeout: float = 600
) -> None:
    """Hand each record of topic, from the beginning to the end offsets, to `each`."""
    consumer = probe_consumer(bootstrap, **{"isolation.level": isolation, "enable.partition.eof": True})
    try:
        consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        at_end = set[int]()
        deadline = time.monotonic() + timeout
        while len(at_end) < partitions:
            if time.monotonic() > deadline:
                raise BenchError(f"{topic}: not read to its end in {timeout:.0f}s")
            for msg in consumer.consume(10000, 0.5):
                error = msg.error()
                if error is None:
                    each(msg)
                elif error.code() == KafkaError._PARTITION_EOF:
                    at_end.add(msg.partition() or 0)
                else:
                    raise KafkaException(error)
    finally:
        consumer.close()
