"""Taking over from MirrorMaker 2: its committed source offsets, and the offset sync a takeover starts from.

Dedicated MM2 (MirrorMakerConfig) keeps the Connect offsets of the flows out of a source cluster in
`mm2-offsets.<source alias>.internal` in each target cluster. MirrorSourceTask commits, per source partition, the
offset of the last record the target acknowledged, as Connect's JsonConverter (schemas off) writes it:
- key: `["<connector>", {"cluster": "<source alias>", "partition": <p>, "topic": "<topic>"}]`
  (MirrorUtils.wrapPartition),
- value: `{"offset": <o>}` (MirrorUtils.wrapOffset); null deletes the entry.
MM2 resumes at o + 1 (MirrorSourceTask seeks to loadOffset + 1): that is its committed position. The checkpoint
and heartbeat connectors keep their own entries in the same topic under other partition keys: they are skipped.

MM2 writes past its committed position before it crashes: records the target acknowledged (and offset syncs for
some of them) after its last commit. An offset sync (u, d) states that the record at source offset u is at
target offset d, and MM2 writes it only once the target acknowledged that record. A takeover therefore stores,
per partition, the position (u, d) of the newest sync MM2 wrote at or before its committed position: never ahead
of an acknowledgement. Mirrorplane's exact resume (replication.task.resume) then verifies the target from d on
against the source from u on, and starts after the last record MM2 wrote.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from replication.mm2.records import OffsetSync

TopicPartitionKey = tuple[str, int]
Decoded = tuple[TopicPartitionKey, int | None]  # a source partition and its committed offset (None: deleted)
SOURCE_PARTITION_KEYS = frozenset({"cluster", "topic", "partition"})


class OffsetRecordError(ValueError):
    """A record of MM2's offsets storage topic that is not Connect's JSON offset format."""


def offsets_storage_topic(source_alias: str) -> str:
    """Dedicated MM2's Connect offsets topic of the flows out of `source_alias`, in each target cluster."""
    return f"mm2-offsets.{source_alias}.internal"


def decode_offset(
    key: bytes | None, value: bytes | None, source_alias: str
) -> tuple[TopicPartitionKey, int | None] | None:
    """The source partition and committed offset of one record (offset None: deleted); None if the record is another
    connector's (checkpoints, heartbeats) or another source cluster's. OffsetRecordError if it is not Connect's JSON."""
    try:
        connector, partition = json.loads(key or b"")
        offset = None if value is None else json.loads(value)
    except (ValueError, TypeError) as exc:
        raise OffsetRecordError(f"key {key!r}: not [connector, partition] JSON ({exc})") from None
    if not isinstance(connector, str) or not isinstance(partition, dict):
        raise OffsetRecordError(f"key {key!r}: not [connector, partition] JSON")
    if set(partition) != SOURCE_PARTITION_KEYS or partition["cluster"] != source_alias:
        return None
    tp = (str(partition["topic"]), int(partition["partition"]))
    if offset is None:
        return tp, None
    if not isinstance(offset, dict) or not isinstance(offset.get("offset"), int):
        raise OffsetRecordError(f'{tp[0]}-{tp[1]}: value {value!r} is not {{"offset": <long>}}')
    return tp, int(offset["offset"])


def committed_positions(
    records: Iterable[tuple[bytes | None, bytes | None]], source_alias: str
) -> dict[TopicPartitionKey, int]:
    """MM2's committed position (the next source offset to copy) per partition, from the records of its offsets
    storage topic in log order: the last record of a partition wins."""
    positions: dict[TopicPartitionKey, int] = {}
    for key, value in records:
        decoded = decode_offset(key, value, source_alias)
        if decoded is None:
            continue
        tp, offset = decoded
        if offset is None:
            positions.pop(tp, None)
        elif offset >= 0:  # Connect's -1: nothing copied yet
            positions[tp] = offset + 1
    return positions


def anchor(syncs: Sequence[OffsetSync], committed: int) -> OffsetSync | None:
    """The newest offset sync (in log order) at or before `committed`: a restarted MM2 copied again from its
    committed offset, so an older run's syncs past it may name copies that a newer run wrote elsewhere."""
    return next((s for s in reversed(syncs) if s.upstream_offset <= committed), None)


@dataclass(frozen=True)
class PartitionTakeover:
    """One source partition MM2 committed: where MM2 committed, and where Mirrorplane starts.

    `start` and `downstream` are the stored position: the anchoring offset sync (u, d), or MM2's committed position
    without a downstream offset when no sync anchors it (records MM2 wrote after its commit are then copied again).
    `kept` is set when Mirrorplane already stored a position for the partition: that one stays.
    """

    topic: str
    partition: int
    remote_topic: str
    committed: int
    start: int
    downstream: int | None
    kept: bool = False

    @property
    def note(self) -> str:
        if self.kept:
            return "kept: Mirrorplane already stored a position for this partition"
        if self.downstream is None:
            return "no offset sync at or before MM2's committed offset: records MM2 wrote after it are copied again"
        return f"offset sync {self.start} -> {self.downstream}: records MM2 wrote after it are verified, not copied"

    def as_dict(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "partition": self.partition,
            "remote_topic": self.remote_topic,
            "committed": self.committed,
            "start": self.start,
            "downstream": self.downstream,
            "kept": self.kept,
            "note": self.note,
        }


def plan(
    committed: Mapping[TopicPartitionKey, int],
    syncs: Mapping[TopicPartitionKey, Sequence[OffsetSync]],
    remote_topic: Mapping[str, str],
    stored: Iterable[TopicPartitionKey],
) -> list[PartitionTakeover]:
    """Per partition MM2 committed (sorted), where Mirrorplane starts; `remote_topic` maps each source topic to its
    remote topic, and `stored` are the partitions with a Mirrorplane position already."""
    kept = set(stored)
    result = []
    for (topic, partition), position in sorted(committed.items()):
        sync = anchor(syncs.get((topic, partition), ()), position)
        start, down = (position, None) if sync is None else (sync.upstream_offset, sync.downstream_offset)
        keep = (topic, partition) in kept
        result.append(PartitionTakeover(topic, partition, remote_topic[topic], position, start, down, keep))
    return result
