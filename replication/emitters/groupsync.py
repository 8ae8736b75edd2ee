"""GroupOffsetSync (`sync.group.offsets.enabled`): checkpointed offsets written into the target's consumer groups.

Safe by construction:
- A target group is written only when it has no members (`replication.offsets.groupoffsets`, the rule a failover follows
  too); if a consumer joins between our look and our write, the broker itself refuses the write.
- An offset only moves forward: a partition is written only if the checkpoint's downstream offset is greater
  than what the target group has committed (or it has committed nothing there).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from confluent_kafka import KafkaError, KafkaException, TopicPartition

from replication.config import FlowConfig
from replication.errors import missing_acl
from replication.kafka.clients import ClientFactory
from replication.kafka.internaltopics import TopicTail, flow_checkpoints_topic
from replication.mm2.filters import GroupFilter
from replication.mm2.records import Checkpoint, LatestCheckpoints, latest_checkpoints
from replication.offsets.checkpoints import read_checkpoints
from replication.offsets.groupoffsets import ConsumerGroups

log = logging.getLogger(__name__)


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

    def __init__(self, flow: FlowConfig, clients: ClientFactory | None = None) -> None:
        self.flow = flow
        self.clients = clients or ClientFactory()
        self.interval = flow.sync_group_offsets_interval_seconds
        self.topic = flow_checkpoints_topic(flow)
        self.latest: LatestCheckpoints = {}
        self.skipped_active: set[str] = set()  # groups left alone in the last round because they had members
        self.refused: dict[str, str] = {}  # group -> why the target refused it in the last round
        self.group_filter = GroupFilter(flow)
        self._tail: TopicTail | None = None
        self._groups: ConsumerGroups | None = None

    def run_once(self) -> bool:
        """One round; returns whether any group offset was written."""
        if self._tail is None:
            self._tail = TopicTail(self.clients.consumer(self.flow.target, f"{self.flow.name}-groupsync"), self.topic)
            self._groups = ConsumerGroups(self.clients.admin(self.flow.target))
        latest_checkpoints(read_checkpoints(self._tail), self.latest)
        if not self.latest or self._groups is None:
            return False
        # The checkpoints topic may hold groups another flow definition checkpointed: only this flow's are synced.
        groups = [group for group in self.latest if self.group_filter.should_replicate(group)]
        states, errors = self._groups.describe_each(groups)
        self._refuse({group: self._reason(group, error) for group, error in errors.items()})
        writable = [group for group, state in states.items() if state.writable]
        self.skipped_active = set(states).difference(writable)
        wrote = False
        for group in writable:
            try:
                wrote = self._sync_group(self._groups, group) or wrote
            except KafkaException as exc:  # one group's failure must not stop the others
                log.warning("%s: group %s not synced: %s", self.flow.name, group, exc)
        return wrote

    def _reason(self, group: str, error: KafkaError) -> str:
        return missing_acl(error, self.flow.target.alias, "READ", group) or f"{error.name()}: {error.str()}"

    def _refuse(self, refused: dict[str, str]) -> None:
        """Log a group the target refuses once, when its reason changes, and once when it is accepted again."""
        for group, reason in sorted(refused.items()):
            if self.refused.get(group) != reason:
                log.warning("%s: group %s not synced: %s", self.flow.name, group, reason)
        for group in sorted(set(self.refused) - set(refused)):
            log.info("%s: group %s is synced again", self.flow.name, group)
        self.refused = refused

    def close(self) -> None:
        if self._tail is not None:
            self._tail.close()

    def _sync_group(self, groups: ConsumerGroups, group: str) -> bool:
        writes = offsets_to_write(self.latest[group], groups.committed(group))
        if not writes:
            return False
        refused = groups.alter(group, writes)
        for (topic, partition), error in sorted(refused.items()):  # e.g. UNKNOWN_MEMBER_ID: a consumer joined
            log.info("%s: group %s %s-%d not synced: %s", self.flow.name, group, topic, partition, error)
        return len(refused) < len(writes)
