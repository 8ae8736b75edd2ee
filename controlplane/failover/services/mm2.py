"""Groups replicated by MirrorMaker 2: no Mirrorplane flow joins the clusters, MM2's own records do.

MM2 names its internal topics as Mirrorplane does (``replication.kafka.internaltopics``): offset syncs in
``mm2-offset-syncs.<target>.internal`` in the source (``offset-syncs.topic.location=source``, its default) or
``mm2-offset-syncs.<source>.internal`` in the target, checkpoints in ``<source>.checkpoints.internal`` in the
target; dedicated MM2 commits its source positions to ``mm2-offsets.<source>.internal`` in the target (its Connect
offsets topic), which is what the drain measures against.

MM2's offset syncs are sparse: it writes one at least every ``offset.lag.max`` records (100 by default), and drops
a sync still pending when a newer one comes. Between two syncs nothing tells where a record went, so positions
translate by MM2's own rule (``translate_downstream``): exact at a sync, else one past the copy of the sync at or
below, re-reading the copies of the upstream records between. The preview says per partition how many, and the
checkpoint result states the bound for the whole failover (``precision``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, TopicPartition

from controlplane.failover.models import Failover
from controlplane.failover.results import DrainPartition, PartitionPlan
from controlplane.failover.services import kafka
from controlplane.flows.services import cluster_config
from replication.config import FlowConfig
from replication.kafka.clients import ClientFactory
from replication.kafka.internaltopics import TIMEOUT, offset_syncs_topic
from replication.mm2.policy import checkpoints_topic, is_heartbeats_topic
from replication.offsets.syncstore import OffsetSyncReader, OffsetSyncStore
from replication.offsets.translation import translate_downstream

METHOD = "mm2-sync"
Partition = tuple[str, int]


def records(failover: Failover) -> FlowConfig | None:
    """The pair source->target with MM2's defaults, its offset syncs where MM2 left them; None when neither
    cluster holds MM2's offset syncs or checkpoints for the pair."""
    pair = FlowConfig(cluster_config(failover.source), cluster_config(failover.target))
    target_topics = _topics(failover.target)
    if offset_syncs_topic(pair) in _topics(failover.source):
        return pair
    on_target = pair.replace(offset_syncs_topic_location="target")
    if offset_syncs_topic(on_target) in target_topics:
        return on_target
    return pair if checkpoints_topic(failover.source.alias) in target_topics else None


def _topics(cluster: Any) -> set[str]:
    try:
        metadata = kafka.admin(cluster).list_topics(timeout=kafka.TIMEOUT)
    except Exception:  # an unreachable cluster holds no records we can read
        return set()
    return set(metadata.topics)


@dataclass(frozen=True)
class Plans:
    plans: list[PartitionPlan]
    precision: str


def plans(failover: Failover, pair: FlowConfig) -> Plans:
    """Every partition the groups committed in the source, translated through MM2's offset syncs by MM2's rule."""
    committed = kafka.groups(failover.source)
    reader = OffsetSyncReader(pair)
    try:
        reader.update()
        store = reader.store
        policy = pair.policy()
        found = [
            _plan(store, group, topic, partition, offset, policy.format_remote_topic(pair.source.alias, topic))
            for group in failover.groups
            for (topic, partition), offset in sorted(committed.committed(group).items())
            if not is_heartbeats_topic(policy, topic)
        ]
    finally:
        reader.close()
    return Plans(found, precision(store, found))


def _plan(store: OffsetSyncStore, group: str, topic: str, partition: int, offset: int, remote: str) -> PartitionPlan:
    translated = translate_downstream(store, topic, partition, offset)
    if translated is None:
        note = f"MirrorMaker 2 wrote no offset sync at or below offset {offset} of {topic}-{partition}"
        return PartitionPlan(group, topic, partition, offset, remote, None, METHOD, False, note)
    downstream, synced = translated
    if synced == offset:
        note = f"MM2's offset sync {synced} -> {downstream}: exact"
        return PartitionPlan(group, topic, partition, offset, remote, downstream, METHOD, True, note, 0, 0)
    reread = offset - synced - 1
    note = (
        f"MM2's offset sync at or below {offset} is {synced} -> {downstream - 1}: the group resumes one past it and "
        f"reads the copies of upstream offsets {synced + 1}..{offset - 1} again ({reread} records)"
    )
    return PartitionPlan(group, topic, partition, offset, remote, downstream, METHOD, False, note, reread, 0)


def precision(store: OffsetSyncStore, found: list[PartitionPlan]) -> str:
    """How exact MM2's records allow the failover to be: the re-reads per partition, and how far apart the offset
    syncs actually present on those partitions are."""
    rereads = [p.reread for p in found if p.reread is not None]
    if not rereads:
        return "MirrorMaker 2's records: no partition could be translated"
    gaps = [
        b[0] - a[0]
        for topic, partition in {(p.topic, p.partition) for p in found}
        for a, b in zip(store.syncs(topic, partition), store.syncs(topic, partition)[1:], strict=False)
    ]
    apart = f"at most {max(gaps)} records apart" if gaps else "once per partition"
    return (
        f"MirrorMaker 2's records: up to {max(rereads)} records per partition may be read again "
        f"({sum(rereads)} in all): MM2 wrote offset syncs every offset.lag.max records (here {apart}), and a group "
        "resumes one past the copy of the offset sync at or below its position"
    )


def measured(
    failover: Failover, pair: FlowConfig, partitions: list[Partition], ends: dict[Partition, int]
) -> tuple[DrainPartition, ...]:
    """Each partition's lag: its source end offset minus the next position MM2 committed for it (None: MM2 has
    committed none, or the end is unknown)."""
    positions = source_positions(pair)
    return tuple(
        DrainPartition(t, p, _lag(ends.get((t, p)), positions.get((t, p))), ends.get((t, p))) for t, p in partitions
    )


def _lag(end: int | None, position: int | None) -> int | None:
    return None if end is None or position is None else max(end - position, 0)


def source_positions(pair: FlowConfig) -> dict[Partition, int]:
    """The next upstream offset MM2 replicates per source partition, from its Connect offsets topic in the target:
    key ``["MirrorSourceConnector", {"cluster", "topic", "partition"}]``, value ``{"offset": last replicated}``."""
    topic = f"mm2-offsets.{pair.source.alias}.internal"
    consumer = ClientFactory().consumer(pair.target, "failover-mm2-offsets")
    try:
        meta = consumer.list_topics(topic, timeout=TIMEOUT).topics.get(topic)
        if meta is None or meta.error is not None:
            return {}
        ends = {p: _end(consumer, topic, p) for p in meta.partitions}
        pending = {p for p, end in ends.items() if end > 0}
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in pending])
        found: dict[Partition, int] = {}
        while pending:
            batch = consumer.consume(1000, TIMEOUT)
            if not batch:
                break  # what was read is what there is
            for msg in batch:
                if msg.error() is not None:
                    continue
                _position(msg.key(), msg.value(), pair.source.alias, found)
                if (msg.offset() or 0) + 1 >= ends[msg.partition() or 0]:
                    pending.discard(msg.partition() or 0)
        return found
    finally:
        consumer.close()


def _end(consumer: Any, topic: str, partition: int) -> int:
    return int(consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=TIMEOUT)[1])


def _position(key: bytes | None, value: bytes | None, source: str, found: dict[Partition, int]) -> None:
    try:
        connector, where = json.loads(key or b"null")
        offset = json.loads(value)["offset"] if value else None
    except (ValueError, TypeError, KeyError):
        return  # not a source partition's position
    if connector != "MirrorSourceConnector" or not isinstance(where, dict) or where.get("cluster") != source:
        return
    partition = (str(where["topic"]), int(where["partition"]))
    if offset is None:
        found.pop(partition, None)  # a tombstone: MM2 forgot the partition
    else:
        found[partition] = int(offset) + 1  # MM2 stores the last replicated offset and resumes after it
