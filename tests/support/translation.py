"""Helpers for offset-translation tests on real clusters: whole partitions in memory, group placement, exactness."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, KafkaError, KafkaException, Producer, TopicPartition

from replication.config import FlowConfig
from replication.task.replicationtask import ReplicationTask
from tests.support.kafka import admin
from tests.support.replication import drive, new_task

Fingerprint = tuple[Any, ...]


@dataclass(frozen=True)
class Copy:
    """A record as a consumer sees it: its offset and the bytes that must survive replication."""

    offset: int
    fingerprint: Fingerprint


def read_partition(bootstrap: str, topic: str, partition: int, isolation: str, timeout: float = 60.0) -> list[Copy]:
    """Every record of one partition, from its log start to its end, as a consumer with `isolation` sees it."""
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
    records: list[Copy] = []
    try:
        consumer.assign([TopicPartition(topic, partition, -2)])  # OFFSET_BEGINNING
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for msg in consumer.consume(5000, 0.5):
                error = msg.error()
                if error is not None and error.code() == KafkaError._PARTITION_EOF:
                    return records
                if error is not None:
                    raise KafkaException(error)
                records.append(Copy(msg.offset() or 0, (msg.key(), msg.value(), msg.headers(), msg.timestamp())))
        raise AssertionError(f"{topic}-{partition}: not read to its end within {timeout}s")
    finally:
        consumer.close()


def read_from(records: Sequence[Copy], position: int) -> list[Fingerprint]:
    """What a consumer resuming at position reads (records are in offset order)."""
    return [r.fingerprint for r in records if r.offset >= position]


def assert_exact(
    source: Sequence[Copy],
    target: Sequence[Copy],
    upstream: int,
    downstream: int | None,
    replicated: Callable[[Copy], bool] = lambda r: True,
    what: str = "",
) -> None:
    """Resuming downstream reads exactly what resuming upstream reads (minus records the flow does not copy)."""
    assert downstream is not None, f"{what}: upstream offset {upstream} was not translated"
    want = [r.fingerprint for r in source if r.offset >= upstream and replicated(r)]
    got = read_from(target, downstream)
    if got != want:
        missing, extra = len(want) - len(got), len(got) - len(want)
        raise AssertionError(
            f"{what}: upstream {upstream} -> downstream {downstream} is not exact: first wanted "
            f"{want[:1]}, first read {got[:1]} ({max(missing, 0)} skipped / {max(extra, 0)} re-read by count)"
        )


def place_groups(bootstrap: str, prefix: str, topic: str, positions: dict[int, list[int]]) -> list[str]:
    """Groups committed at the given positions: group i commits positions[p][i] in each partition p."""
    client = admin(bootstrap)
    count = max(len(v) for v in positions.values())
    groups = []
    for i in range(count):
        group = f"{prefix}-g{i}"
        tps = [TopicPartition(topic, p, offsets[i]) for p, offsets in positions.items() if i < len(offsets)]
        result = client.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(group, tps)])[group]
        assert all(tp.error is None for tp in result.result(timeout=30).topic_partitions)
        groups.append(group)
    return groups


def committed(bootstrap: str, group: str) -> dict[tuple[str, int], int]:
    client = admin(bootstrap)  # keep the handle alive until the future resolves
    result = client.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group]
    return {(tp.topic, tp.partition): tp.offset for tp in result.result(timeout=30).topic_partitions}


def replicate(flow: FlowConfig, done: Callable[[], bool], what: str, batch_size: int = 0) -> ReplicationTask:
    """A task driven until done, then closed (which stores positions and writes the last offset syncs)."""
    task = new_task(flow)
    task.batch_size = batch_size or task.batch_size
    try:
        drive([task], done, timeout=120, what=what)
    finally:
        task.close()
    return task


def produce_transactions(bootstrap: str, topic: str, plan: Iterable[tuple[int, bool]], partition: int = 0) -> None:
    """Transactions of (records, commit?) in order; aborted records are really written (flushed) before the abort.
    Returns once the last transaction's marker is in the partition: the coordinator writes markers after it has
    answered the producer, so the end offset a read_committed client reads (the last stable offset) moves past the
    transaction a moment after the commit or abort returned (CI once read the old end there)."""
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": f"mp-test-{uuid.uuid4().hex[:8]}"})
    producer.init_transactions(30)
    seq = 0
    for count, commit in plan:
        producer.begin_transaction()
        for _ in range(count):
            value = f"txn-{seq:06d}-{'c' if commit else 'a'}".encode()
            producer.produce(topic, value, f"k{seq}".encode(), partition, headers=[("seq", str(seq).encode())])
            seq += 1
        producer.flush(30)
        if commit:
            producer.commit_transaction(30)
        else:
            producer.abort_transaction(30)
    wait_for_markers(bootstrap, topic, partition)


def wait_for_markers(bootstrap: str, topic: str, partition: int, timeout: float = 30.0) -> None:
    """Until the partition has no open transaction: its last stable offset (read_committed) is its high watermark
    (read_uncommitted), which includes every marker written."""
    part = TopicPartition(topic, partition)
    readers = [
        Consumer({"bootstrap.servers": bootstrap, "group.id": "mp-test-probe", "isolation.level": level})
        for level in ("read_committed", "read_uncommitted")
    ]
    deadline = time.monotonic() + timeout
    try:
        while True:
            stable, high = (reader.get_watermark_offsets(part, timeout=10)[1] for reader in readers)
            if stable == high:
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"{topic}-{partition}: last stable offset {stable} still below {high}")
            time.sleep(0.05)
    finally:
        for reader in readers:
            reader.close()
