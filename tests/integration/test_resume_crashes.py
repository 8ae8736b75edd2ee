"""At least once, SIGKILLed replicators leave every record exactly once on the target, compared by bytes.

Each test kills `python -m replication run` three times while it copies, lets a fourth run finish, and compares
the target, partition by partition and in order, with what the replicator should have produced from the source:
plain records, records a message handler drops, a compacted source with holes, and a source with aborted
transactions and commit markers (read_committed).
"""

from __future__ import annotations

import os
import random
import signal
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

from replication.kafka.clients import position_reader_config
from replication.kafka.positions import load, positions_topic
from tests.support.handlers import dropped_by_value
from tests.support.kafka import (
    admin,
    consume_to_end,
    create_topic,
    end_offsets,
    small_segment_config,
    unique_topic,
    wait_until,
)
from tests.support.replication import make_flow, produce_known, record_value, start_replicator

pytestmark = pytest.mark.kafka
PARTITIONS = 4
KILLS = 3
Copy = tuple[bytes | None, bytes | None]  # key, value
Setup = Callable[[str, str], tuple[str, str]]  # (bootstrap, topic) -> (isolation level, flow properties)


def _plain(src: str, topic: str) -> tuple[str, str]:
    create_topic(src, topic, partitions=PARTITIONS)
    produce_known(src, topic, PARTITIONS, 200_000)
    return "read_uncommitted", ""


def _handler_drops(src: str, topic: str) -> tuple[str, str]:
    _plain(src, topic)
    return "read_uncommitted", "us-west->backup.record.handler.class = tests.support.handlers:DropEveryThirdByValue\n"


def _compacted(src: str, topic: str) -> tuple[str, str]:
    """240k records, every third superseded by the next one's key, compacted by the broker until its offsets have
    holes, then frozen (cleanup.policy=delete) so the source no longer changes while it is replicated."""
    compact = {
        "cleanup.policy": "compact",
        **small_segment_config(src, 65536),
        "segment.ms": "100",
        "min.cleanable.dirty.ratio": "0.01",
        "delete.retention.ms": "100",
    }
    create_topic(src, topic, partitions=PARTITIONS, config=compact)
    # Batches must fit in a segment, or the broker refuses them.
    config = {"bootstrap.servers": src, "linger.ms": 20, "batch.size": 16384, "queue.buffering.max.messages": 1_000_000}
    producer, failed = Producer(config), []
    for i in range(240_000):
        p, seq = i % PARTITIONS, i // PARTITIONS
        producer.produce(
            topic,
            record_value(p, seq),
            f"key-{seq + 1 if seq % 3 == 0 else seq}".encode(),  # every third record is superseded by the next
            p,
            on_delivery=lambda err, _: failed.append(err) if err is not None else None,
        )
        if i % 10_000 == 0:
            producer.poll(0)
    assert producer.flush(60) == 0 and not failed, failed[:3]
    wait_until(lambda: all(_holes(src, topic, p) for p in range(PARTITIONS)), timeout=120, what="compaction holes")
    _stable(src, topic)
    delete = ConfigEntry("cleanup.policy", "delete", incremental_operation=AlterConfigOpType.SET)
    freeze = ConfigResource(ResourceType.TOPIC, topic, incremental_configs=[delete])
    client = admin(src)  # kept alive until the future resolves
    client.incremental_alter_configs([freeze])[freeze].result(timeout=30)
    _stable(src, topic)
    # The remote topic must keep every record it gets: no compaction there (its configs are not synced).
    return "read_uncommitted", "us-west->backup.sync.topic.configs.enabled = false\n"


def _holes(src: str, topic: str, partition: int) -> bool:
    """Whether the first 2,000 records of a partition have offset gaps."""
    consumer = Consumer({"bootstrap.servers": src, "group.id": "mp-test-holes", "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(topic, partition, 0)])
        offsets: list[int] = []
        while len(offsets) < 2000:
            batch = consumer.consume(2000 - len(offsets), timeout=5)
            if not batch:
                break
            offsets += [m.offset() or 0 for m in batch if m.error() is None]
        return bool(offsets) and offsets[-1] - offsets[0] + 1 > len(offsets)
    finally:
        consumer.close()


def _stable(src: str, topic: str) -> None:
    """Wait until the log cleaner is done: two reads in a row see the same records."""
    seen: list[int] = []

    def unchanged() -> bool:
        seen.append(len(consume_to_end(src, topic, PARTITIONS)))
        return len(seen) >= 2 and seen[-1] == seen[-2]

    wait_until(unchanged, timeout=120, interval=1, what=f"the log cleaner done with {topic}")


def _aborted_transactions(src: str, topic: str) -> tuple[str, str]:
    """200 transactions of 1,000 records, every third aborted: aborted records and commit markers in each partition."""
    create_topic(src, topic, partitions=PARTITIONS)
    producer = Producer({"bootstrap.servers": src, "transactional.id": f"{topic}-txn", "linger.ms": 20})
    producer.init_transactions(30)
    for txn in range(200):
        producer.begin_transaction()
        for i in range(txn * 1000, txn * 1000 + 1000):
            p, seq = i % PARTITIONS, i // PARTITIONS
            producer.produce(topic, record_value(p, seq), f"key-{i}".encode(), p)
        producer.flush(30)  # the records are in the log before the transaction ends (and 2.3 brokers need it)
        if txn % 3 == 2:
            producer.abort_transaction(30)
        else:
            producer.commit_transaction(30)
    return "read_committed", "us-west->backup.consumer.isolation.level = read_committed\n"


SETUPS: dict[str, Setup] = {
    "plain": _plain,
    "handler-drops": _handler_drops,
    "compacted-gaps": _compacted,
    "aborted-transactions": _aborted_transactions,
}


def _write_config(path: Path, clusters: dict[str, str], topic: str, extra: str) -> Path:
    path.write_text(
        "clusters = us-west, backup\n"
        f"us-west.bootstrap.servers = {clusters['us-west']}\n"
        f"backup.bootstrap.servers = {clusters['backup']}\n"
        "us-west->backup.enabled = true\n"
        f"us-west->backup.topics = {topic}\n"
        "us-west->backup.exactly.once = false\n"
        "us-west->backup.emit.heartbeats.enabled = false\n"
        "us-west->backup.emit.checkpoints.enabled = false\n" + extra
    )
    return path


def _expected(src: str, topic: str, isolation: str, handler: bool) -> tuple[dict[int, list[Copy]], dict[int, int]]:
    """What the target must hold per partition, in order, and the offset after each partition's last record."""
    expected: dict[int, list[Copy]] = {p: [] for p in range(PARTITIONS)}
    after_last = dict.fromkeys(range(PARTITIONS), 0)
    for msg in consume_to_end(src, topic, PARTITIONS, isolation=isolation):
        p = msg.partition() or 0
        after_last[p] = (msg.offset() or 0) + 1
        if not (handler and dropped_by_value(msg.value())):
            expected[p].append((msg.key(), msg.value()))
    return expected, after_last


def _stored_past(clusters: dict[str, str], topic: str, after_last: dict[int, int]) -> bool:
    flow = make_flow(clusters, "us-west", "backup", topic)
    stored = load(position_reader_config(flow, 0), positions_topic("us-west"), timeout=30)
    return all((pos := stored.get((topic, p))) is not None and pos.next_offset >= n for p, n in after_last.items())


# About a minute each under CI's load: the gap-making variants beyond the plain and transactional ones run in
# make test-faults.
SLOW_VARIANTS = ("handler-drops", "compacted-gaps", "aborted-transactions")


@pytest.mark.parametrize(
    "variant", [pytest.param(v, marks=[pytest.mark.slow] if v in SLOW_VARIANTS else []) for v in SETUPS]
)
def test_sigkill_three_times_at_least_once_leaves_every_record_exactly_once(
    kafka_clusters: dict[str, str], tmp_path: Path, variant: str
) -> None:
    src, dst = kafka_clusters["us-west"], kafka_clusters["backup"]
    topic = unique_topic(f"resume-{variant}")
    isolation, extra = SETUPS[variant](src, topic)
    expected, after_last = _expected(src, topic, isolation, handler=variant == "handler-drops")
    total = sum(len(records) for records in expected.values())
    config = _write_config(tmp_path / "mm2.properties", kafka_clusters, topic, extra)
    remote, log = f"us-west.{topic}", tmp_path / "replication.log"
    seed = int(os.environ.get("MIRRORPLANE_KILL_SEED", random.randrange(1 << 30)))
    rng = random.Random(seed)
    # Each run is killed once it has written about a fifth of the records (the replicator copies ~100k records/s
    # here, faster than it stores positions: each kill leaves a large acknowledged window behind).
    steps = [total // (KILLS + 2) + rng.randrange(-total // 20, total // 20) for _ in range(KILLS)]

    def replicated() -> int:
        try:
            return sum(end_offsets(dst, remote, range(PARTITIONS)).values())
        except Exception:
            return 0

    kill_points = []
    for step in steps:
        point = replicated() + step
        kill_points.append(point)
        proc = start_replicator(config, log)
        # Under load the poll can miss the point by a whole run (the replicator copies ~100k records/s): a run
        # that finds everything copied already has nothing left to reach, and is killed all the same.
        wait_until(
            lambda point=point, proc=proc: replicated() >= min(point, total) or proc.poll() is not None,
            timeout=180,
            interval=0.05,
            what=f"{point} records at the target",
        )
        assert proc.poll() is None, f"replication exited early (seed {seed}): {log.read_text()[-3000:]}"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    proc = start_replicator(config, log)
    try:
        wait_until(lambda: _stored_past(kafka_clusters, topic, after_last), timeout=240, interval=1, what="the end")
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0, log.read_text()[-3000:]

    got: dict[int, list[Copy]] = {p: [] for p in range(PARTITIONS)}
    for msg in consume_to_end(dst, remote, PARTITIONS):
        got[msg.partition() or 0].append((msg.key(), msg.value()))
    duplicates = lost = 0
    for p in range(PARTITIONS):
        have, want = Counter(got[p]), Counter(expected[p])
        duplicates += sum((have - want).values())
        lost += sum((want - have).values())
    print(f"{variant}: {total} records, kills at {kill_points}: {duplicates} duplicates, {lost} lost (seed {seed})")
    assert (duplicates, lost) == (0, 0), f"{duplicates} duplicates, {lost} lost (seed {seed})"
    for p in range(PARTITIONS):
        assert got[p] == expected[p], f"partition {p}: order differs (seed {seed})"
