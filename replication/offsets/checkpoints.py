"""Reading what a flow's checkpoints are made of: source consumer groups' committed offsets, and the checkpoints
a checkpoints topic holds. The checkpoint emitter, MirrorClient, offset translation and the control plane read
with these; nothing here writes.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

from confluent_kafka import ConsumerGroupTopicPartitions
from confluent_kafka.admin import AdminClient

from replication.kafka.internaltopics import TIMEOUT, TopicTail
from replication.mm2.filters import GroupFilter, TopicFilter
from replication.mm2.records import Checkpoint, RecordFormatError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GroupOffset:
    """A consumer group's committed offset (the next record it reads) in one partition: read from a source group,
    or written (by a failover) into a target group."""

    group: str
    topic: str
    partition: int
    offset: int
    metadata: str = ""


def list_groups(admin: AdminClient, wanted: GroupFilter) -> list[str]:
    listing = admin.list_consumer_groups(request_timeout=TIMEOUT).result(timeout=TIMEOUT)
    return sorted(g.group_id for g in listing.valid if wanted.should_replicate(g.group_id))


def group_offsets(
    admin: AdminClient, groups: Iterable[str], topics: TopicFilter, timeout: float = TIMEOUT
) -> list[GroupOffset]:
    """Committed offsets of the groups (one request each, all in flight together) in topics the flow replicates."""
    futures = {
        group: admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)], request_timeout=timeout)[group]
        for group in groups
    }
    result = []
    for group, future in futures.items():
        for tp in future.result(timeout=timeout).topic_partitions or []:
            if tp.error is None and tp.offset >= 0 and topics.should_replicate(tp.topic):
                result.append(GroupOffset(group, tp.topic, tp.partition, tp.offset, tp.metadata or ""))
    return result


def read_checkpoints(tail: TopicTail, timeout: float = TIMEOUT) -> list[Checkpoint]:
    result = []
    for msg in tail.read_to_end(timeout):
        try:
            result.append(Checkpoint.from_bytes(msg.key(), msg.value(), msg.timestamp()[1]))
        except RecordFormatError as exc:
            log.warning("%s: skipping a malformed checkpoint at offset %s: %s", tail.topic, msg.offset(), exc)
    return result
