"""GroupOffsetSync (`sync.group.offsets.enabled`): checkpointed offsets written into the target's consumer groups.

Safe by construction:
- A target group is written only when it has no members: state EMPTY, or DEAD (no such group yet). A group with
  members, or rebalancing, or in a state we cannot read, is left alone. If a consumer joins between our look
  and our write, the broker itself refuses the write (an admin commit carries no generation: UNKNOWN_MEMBER_ID).
- An offset only moves forward: a partition is written only if the checkpoint's downstream offset is greater
  than what the target group has committed (or it has committed nothing there).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from confluent_kafka import ConsumerGroupState, ConsumerGroupTopicPartitions, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient

from replication.checkpoints import read_checkpoints
from replication.config import FlowConfig
from replication.internaltopics import TIMEOUT, InternalClients, TopicTail, flow_checkpoints_topic
from replication.records import Checkpoint

log = logging.getLogger("replication.groupsync")
WRITABLE_STATES = (ConsumerGroupState.EMPTY, ConsumerGroupState.DEAD)


def offsets_to_write(
    checkpoints: Mapping[tuple[str, int], Checkpoint], committed: Mapping[tuple[str, int], int]
) -> list[TopicPartition]:
    """The partitions whose checkpoint is ahead of the target group's committed offset (never backwards)."""
    return [
        TopicPartition(topic, partition, cp.downstream_offset, metadata=cp.metadata)
        if cp.metadata
        else TopicPartition(topic, partition, cp.downstream_offset)
        for (topic, partition), cp in sorted(checkpoints.items())
        if cp.downstream_offset > committed.get((topic, partition), -1)
    ]


class GroupOffsetSync:
    """One flow's group offset sync: `run_once()` applies the latest checkpoints to the target's empty groups."""

    def __init__(self, flow: FlowConfig, clients: InternalClients | None = None) -> None:
        self.flow = flow
        self.clients = clients or InternalClients()
        self.interval = flow.sync_group_offsets_interval_seconds
        self.topic = flow_checkpoints_topic(flow)
        self.latest: dict[str, dict[tuple[str, int], Checkpoint]] = {}  # group -> (remote topic, partition) -> cp
        self.skipped_active: set[str] = set()  # groups left alone in the last round because they had members
        self._tail: TopicTail | None = None
        self._admin: AdminClient | None = None

    def run_once(self) -> bool:
        """One round; returns whether any group offset was written."""
        if self._tail is None:
            self._tail = TopicTail(self.clients.consumer(self.flow.target, f"{self.flow.name}-groupsync"), self.topic)
            self._admin = self.clients.admin(self.flow.target)
        for cp in read_checkpoints(self._tail):
            self.latest.setdefault(cp.consumer_group_id, {})[(cp.topic, cp.partition)] = cp
        if not self.latest or self._admin is None:
            return False
        writable = self._writable_groups(self._admin, list(self.latest))
        wrote = False
        for group in writable:
            try:
                wrote = self._sync_group(self._admin, group) or wrote
            except KafkaException as exc:  # one group's failure must not stop the others
                log.warning("%s: group %s not synced: %s", self.flow.name, group, exc)
        return wrote

    def close(self) -> None:
        if self._tail is not None:
            self._tail.close()

    def _writable_groups(self, admin: AdminClient, groups: list[str]) -> list[str]:
        futures = admin.describe_consumer_groups(groups, request_timeout=TIMEOUT)
        writable, self.skipped_active = [], set()
        for group, future in futures.items():
            description = future.result(timeout=TIMEOUT)
            if description.state in WRITABLE_STATES and not description.members:
                writable.append(group)
            else:
                self.skipped_active.add(group)
        return writable

    def _sync_group(self, admin: AdminClient, group: str) -> bool:
        request = [ConsumerGroupTopicPartitions(group)]
        current = admin.list_consumer_group_offsets(request, request_timeout=TIMEOUT)[group].result(timeout=TIMEOUT)
        committed = {(tp.topic, tp.partition): tp.offset for tp in current.topic_partitions or [] if tp.error is None}
        writes = offsets_to_write(self.latest[group], committed)
        if not writes:
            return False
        result = admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(group, writes)])[group]
        refused = [tp for tp in result.result(timeout=TIMEOUT).topic_partitions or [] if tp.error is not None]
        for tp in refused:  # e.g. UNKNOWN_MEMBER_ID: a consumer joined after we looked
            log.info("%s: group %s %s-%d not synced: %s", self.flow.name, group, tp.topic, tp.partition, tp.error)
        return len(refused) < len(writes)
