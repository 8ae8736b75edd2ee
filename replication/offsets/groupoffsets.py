"""A cluster's consumer groups seen through one admin client: their states, their committed offsets, offset writes.

The one home of the rule that both GroupOffsetSync and a failover's apply step follow: a group's offsets are written
only while it has no members, in state EMPTY, or DEAD (no such group yet). A group with members, or rebalancing, or
in a state we cannot read, is left alone. If a consumer joins between the look and the write, the broker itself
refuses the write (an admin commit carries no generation: UNKNOWN_MEMBER_ID), and `alter` reports it per partition.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from confluent_kafka import ConsumerGroupState, ConsumerGroupTopicPartitions, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient

from replication.kafka.internaltopics import TIMEOUT

Partition = tuple[str, int]
WRITABLE_STATES = frozenset({ConsumerGroupState.EMPTY.name, ConsumerGroupState.DEAD.name})


@dataclass(frozen=True)
class GroupState:
    """One consumer group as the broker describes it: the name of its state and its members (client id@host)."""

    group: str
    state: str
    members: tuple[str, ...]

    @property
    def writable(self) -> bool:
        """No members and not rebalancing: its offsets may be written."""
        return not self.members and self.state in WRITABLE_STATES


class ConsumerGroups:
    """The consumer-group admin calls, each bounded by `timeout` seconds (the request and the wait for it)."""

    def __init__(self, admin: AdminClient, timeout: float = TIMEOUT) -> None:
        self.admin = admin
        self.timeout = timeout

    def describe(self, groups: Iterable[str]) -> dict[str, GroupState]:
        futures = self.admin.describe_consumer_groups(list(groups), request_timeout=self.timeout)
        states = {}
        for group, future in futures.items():
            description = future.result(timeout=self.timeout)
            members = tuple(f"{m.client_id}@{m.host}" for m in description.members or [])
            states[group] = GroupState(group, description.state.name, members)
        return states

    def describe_each(self, groups: Iterable[str]) -> tuple[dict[str, GroupState], dict[str, KafkaError]]:
        """Like describe, but a group the broker refuses (e.g. GROUP_AUTHORIZATION_FAILED) is returned with its
        error instead of failing the others."""
        groups = list(groups)
        if not groups:
            return {}, {}
        futures = self.admin.describe_consumer_groups(groups, request_timeout=self.timeout)
        states: dict[str, GroupState] = {}
        errors: dict[str, KafkaError] = {}
        for group, future in futures.items():
            try:
                description = future.result(timeout=self.timeout)
            except KafkaException as exc:
                errors[group] = exc.args[0]
                continue
            members = tuple(f"{m.client_id}@{m.host}" for m in description.members or [])
            states[group] = GroupState(group, description.state.name, members)
        return states, errors

    def committed(self, group: str) -> dict[Partition, int]:
        """The group's committed offsets, every topic; partitions with no commit, or an error, are left out."""
        request = [ConsumerGroupTopicPartitions(group)]
        future = self.admin.list_consumer_group_offsets(request, request_timeout=self.timeout)[group]
        return {
            (tp.topic, tp.partition): tp.offset
            for tp in future.result(timeout=self.timeout).topic_partitions or []
            if tp.error is None and tp.offset >= 0
        }

    def alter(self, group: str, offsets: Sequence[TopicPartition]) -> dict[Partition, str]:
        """Write the offsets into the group; returns the partitions the broker refused, with its reason."""
        request = [ConsumerGroupTopicPartitions(group, list(offsets))]
        future = self.admin.alter_consumer_group_offsets(request, request_timeout=self.timeout)[group]
        return {
            (tp.topic, tp.partition): str(tp.error)
            for tp in future.result(timeout=self.timeout).topic_partitions or []
            if tp.error is not None
        }
