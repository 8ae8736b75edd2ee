"""Seeding a flow's start positions from a stopped MirrorMaker 2, so Mirrorplane continues where MM2 left off.

`take_over(flow)` reads MM2's committed source offsets from its offsets storage topic in the target cluster and
MM2's offset syncs (the flow's offset syncs topic: the same name and cluster as MM2's), and writes, for each
partition MM2 committed and Mirrorplane has no position for, the position replication.mm2.takeover chooses to the
flow's positions topic. The tasks read that topic when they start (replication.task.starting), and the exact
resume skips what MM2 wrote after the position. Run it after MM2 has stopped and before the flow's tasks start.

Nothing is guessed: when MM2's offsets storage topic is missing or a record of it is unreadable, TakeoverError
names the topic and nothing is written. A partition MM2 never committed gets no position, so it starts where
Mirrorplane starts any new partition.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

from replication.clientlog import logged
from replication.config import FlowConfig
from replication.errors import LEADER_NOT_READY
from replication.kafka import positions
from replication.kafka.clients import internal_consumer_config, internal_producer_config
from replication.kafka.internaltopics import COMPACTED_CONFIG, ensure_topic, offset_syncs_cluster, offset_syncs_topic
from replication.kafka.positions import Position
from replication.mm2.records import OffsetSync, RecordFormatError
from replication.mm2.takeover import (
    OffsetRecordError,
    PartitionTakeover,
    TopicPartitionKey,
    committed_positions,
    offsets_storage_topic,
    plan,
)

log = logging.getLogger(__name__)
TIMEOUT = 30.0


class TakeoverError(RuntimeError):
    """MM2's committed offsets could not be read, or the positions not written: nothing was taken over."""


@dataclass
class Takeover:
    """What a takeover of one flow found and stored."""

    flow: str
    offsets_topic: str
    partitions: list[PartitionTakeover] = field(default_factory=list)

    @property
    def taken_over(self) -> list[PartitionTakeover]:
        return [p for p in self.partitions if not p.kept]

    def as_dict(self) -> dict[str, Any]:
        return {
            "flow": self.flow,
            "offsets_topic": self.offsets_topic,
            "taken_over": len(self.taken_over),
            "partitions": [p.as_dict() for p in self.partitions],
        }

    def lines(self) -> list[str]:
        """One line per partition, for a log or a terminal."""
        head = f"{self.flow}: {len(self.taken_over)} partitions taken over from MM2 ({self.offsets_topic})"
        rows = [
            f"  {p.topic}-{p.partition} -> {p.remote_topic}: MM2 committed {p.committed}, start {p.start}; {p.note}"
            for p in self.partitions
        ]
        return [head, *rows]


def take_over(flow: FlowConfig, timeout: float = TIMEOUT) -> Takeover:
    """Store the start positions of `flow` from MM2's committed offsets (see the module docstring)."""
    topic = offsets_storage_topic(flow.source.alias)
    target = internal_consumer_config(flow.target, f"{flow.name}-takeover")
    records = read_topic(target, topic, timeout)
    if records is None:
        raise TakeoverError(
            f"MM2's offsets storage topic {topic} does not exist in target cluster {flow.target.alias}: "
            "no committed offsets to take over (is this the cluster MM2 copied to, in dedicated mode?)"
        )
    try:
        committed = committed_positions(((m.key(), m.value()) for m in records), flow.source.alias)
    except OffsetRecordError as exc:
        raise TakeoverError(f"MM2's offsets storage topic {topic} in {flow.target.alias}: unreadable: {exc}") from None
    positions_topic = positions.positions_topic(flow.source.alias)
    stored = [
        positions.decode(key, value)[0]
        for key, value in ((m.key(), m.value()) for m in read_topic(target, positions_topic, timeout) or [])
        if key is not None and value is not None
    ]
    policy = flow.policy()
    remote = {t: policy.format_remote_topic(flow.source.alias, t) for t, _ in committed}
    result = Takeover(flow.name, topic, plan(committed, read_syncs(flow, timeout), remote, stored))
    _write(flow, positions_topic, result.taken_over)
    for line in result.lines():
        log.info("%s", line)
    return result


def read_syncs(flow: FlowConfig, timeout: float = TIMEOUT) -> dict[TopicPartitionKey, list[OffsetSync]]:
    """The offset syncs of the flow's offset syncs topic, per source partition in log order (none if it is missing)."""
    cluster = offset_syncs_cluster(flow)
    topic = offset_syncs_topic(flow)
    syncs: dict[TopicPartitionKey, list[OffsetSync]] = {}
    for msg in read_topic(internal_consumer_config(cluster, f"{flow.name}-takeover"), topic, timeout) or []:
        try:
            sync = OffsetSync.from_bytes(msg.key(), msg.value())
        except RecordFormatError as exc:
            log.warning("%s: skipping a malformed offset sync at offset %s: %s", topic, msg.offset(), exc)
            continue
        syncs.setdefault((sync.topic, sync.partition), []).append(sync)
    return syncs


def read_topic(config: dict[str, Any], topic: str, timeout: float = TIMEOUT) -> list[Message] | None:
    """Every committed record of every partition of `topic`, as of this call; None if the topic does not exist."""
    consumer = Consumer(logged({**config, "isolation.level": "read_committed", "enable.partition.eof": True}))
    try:
        meta = consumer.list_topics(topic, timeout=timeout).topics.get(topic)
        if meta is None or (meta.error is not None and meta.error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART):
            return None
        if meta.error is not None:
            raise TakeoverError(f"{topic}: {meta.error.str()}")
        ends = _ends(consumer, topic, sorted(meta.partitions), timeout)
        return _consume(consumer, topic, ends, timeout)
    except KafkaException as exc:
        raise TakeoverError(f"{topic}: not read: {exc.args[0].str()}") from None
    finally:
        consumer.close()


def _ends(consumer: Consumer, topic: str, partitions: Sequence[int], timeout: float) -> dict[int, tuple[int, int]]:
    """Each partition's offsets; a partition whose leader is not ready yet (a topic created a moment ago) is asked
    again until the deadline."""
    deadline = time.monotonic() + timeout
    ends: dict[int, tuple[int, int]] = {}
    for p in partitions:
        while p not in ends:
            try:
                ends[p] = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=timeout)
            except KafkaException as exc:
                if exc.args[0].code() not in LEADER_NOT_READY or time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
    return ends


def _consume(consumer: Consumer, topic: str, ends: dict[int, tuple[int, int]], timeout: float) -> list[Message]:
    """Read each partition from its start to the end it had when `ends` were read. A partition is done at its last
    record, or at its end-of-partition event past that end (offsets up to it compacted, or transaction markers):
    the event follows every record before it, where the consumer's position may already be past records it has
    fetched but not yet returned."""
    waiting = {p: high for p, (low, high) in ends.items() if high > low}
    consumer.assign([TopicPartition(topic, p, ends[p][0]) for p in waiting])
    records: list[Message] = []
    deadline = time.monotonic() + timeout
    while waiting:
        if time.monotonic() > deadline:
            raise TakeoverError(f"{topic}: not read to its end within {timeout:.0f} s (partitions {sorted(waiting)})")
        for msg in consumer.consume(1000, 0.5):
            partition, offset, error = msg.partition() or 0, msg.offset() or 0, msg.error()
            if partition not in waiting:
                continue
            if error is not None and error.code() != KafkaError._PARTITION_EOF:
                raise TakeoverError(f"{topic}: not read: {error.str()}")
            if error is None:
                records.append(msg)
                offset += 1
            if offset >= waiting[partition]:
                del waiting[partition]
    return records


def _write(flow: FlowConfig, topic: str, partitions: Sequence[PartitionTakeover]) -> None:
    """Write the positions and wait until the target acknowledged every one."""
    if not partitions:
        return
    ensure_topic(AdminClient(logged(flow.target.client)), topic, COMPACTED_CONFIG)
    producer = Producer(logged(internal_producer_config(flow.target)))
    failed: list[str] = []

    def delivered(err: KafkaError | None, _msg: Message) -> None:
        if err is not None:
            failed.append(err.str())

    for p in partitions:
        key, value = positions.encode((p.topic, p.partition), _position_of(p))
        producer.produce(topic, value=value, key=key, partition=0, on_delivery=delivered)
    remaining = producer.flush(TIMEOUT)
    if remaining or failed:
        raise TakeoverError(f"{topic} in {flow.target.alias}: positions not written: {failed or remaining}")


def _position_of(p: PartitionTakeover) -> Position:
    # The source end offset is at least `start` (MM2 read up to it): the recreated-topic check needs no more.
    if p.downstream is None:
        return Position(p.start, p.start)
    return Position(p.start, p.start, p.downstream, p.remote_topic)
