"""Source data for throughput runs: N records of one size, spread over the partitions, loaded once and reused."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from confluent_kafka import KafkaError, KafkaException, Producer

from bench.kafkaops import BenchError, Watermarks, create_topic, delete_topics, topic_partitions

# Records carry a key and two small headers, like the engine tests' produce_known, so header copying is measured.
HEADERS: list[tuple[str, str | bytes | None]] = [("seq", b"000000001"), ("bin", bytes([1, 0, 255]))]
KEEP_FOREVER = {"retention.ms": "-1", "retention.bytes": "-1"}


@dataclass(frozen=True)
class Dataset:
    """A preloaded source topic: `count` records with `size`-byte values over `partitions` partitions."""

    count: int
    size: int
    partitions: int

    @property
    def topic(self) -> str:
        return f"bench-{self.size}b-{self.count}-p{self.partitions}"

    @property
    def label(self) -> str:
        return f"{self.size} B" if self.size < 1024 else f"{self.size / 1024:g} KiB"

    @property
    def payload_bytes(self) -> int:
        return self.count * self.size


def ensure_dataset(bootstrap: str, dataset: Dataset) -> bool:
    """Create and fill the topic unless it already holds exactly the dataset; returns whether it loaded data."""
    deadline = time.monotonic() + 60
    while True:
        partitions = topic_partitions(bootstrap, dataset.topic)
        if partitions == dataset.partitions and _complete(bootstrap, dataset):
            return False
        if partitions:  # left incomplete by an interrupted preload
            print(f"  {dataset.topic} does not hold exactly {dataset.count:,} records: loading it again")
        delete_topics(bootstrap, [dataset.topic])
        try:
            create_topic(bootstrap, dataset.topic, dataset.partitions, KEEP_FOREVER, exists_timeout=0)
            break
        except KafkaException as exc:
            # Just after a broker starts, its metadata may not list a topic it holds yet: look again.
            if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS or time.monotonic() > deadline:
                raise
            time.sleep(1)
    started = time.monotonic()
    produce_records(bootstrap, dataset.topic, dataset.partitions, dataset.count, dataset.size)
    if not _complete(bootstrap, dataset):
        raise BenchError(f"{dataset.topic}: preload did not leave exactly {dataset.count} records")
    print(f"  preloaded {dataset.count:,} x {dataset.label} into {dataset.topic} in {time.monotonic() - started:.1f}s")
    return True


def _complete(bootstrap: str, dataset: Dataset) -> bool:
    marks = Watermarks(bootstrap, dataset.topic, dataset.partitions)
    try:
        offsets = marks.existing_offsets()
    finally:
        marks.close()
    return all(low == 0 for low, _ in offsets) and sum(high for _, high in offsets) == dataset.count


def produce_records(bootstrap: str, topic: str, partitions: int, count: int, size: int) -> None:
    """count records, round-robin over partitions, keyed, with CreateTime now; fails unless all are acknowledged."""
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": "all",
            "enable.idempotence": True,
            "linger.ms": 50,
            "batch.num.messages": 10000,
            "queue.buffering.max.messages": 1_000_000,
            "queue.buffering.max.kbytes": 131_072,  # bounded, so the bench process stays small
        }
    )
    values = [os.urandom(size) for _ in range(256)]
    produce = producer.produce
    for i in range(count):
        while True:
            try:
                produce(topic, values[i & 255], b"key-%d" % i, i % partitions, headers=HEADERS)
                break
            except BufferError:
                producer.poll(0.1)
    if producer.flush(120) != 0:
        raise BenchError(f"{topic}: preload not acknowledged within 120s")
