"""The Kafka admin operations a failover needs, each with a short deadline: committed group offsets, group
states, end offsets, offset writes and ACLs. Credentials stay inside the client settings; errors are librdkafka's
text, which never includes them."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from confluent_kafka import ConsumerGroupState, ConsumerGroupTopicPartitions, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    ResourcePatternType,
    ResourceType,
)

from controlplane.clusters.models import Cluster
from controlplane.clusters.services import client_settings, connectivity_check
from controlplane.flows.services import cluster_config
from replication.clientlog import LIBRDKAFKA_LOG as _librdkafka_log  # rate-limited
from replication.internaltopics import InternalClients

log = logging.getLogger(__name__)
TIMEOUT = 10.0
Partition = tuple[str, int]
EMPTY_STATES = (ConsumerGroupState.EMPTY, ConsumerGroupState.DEAD)


def admin(cluster: Cluster) -> AdminClient:
    settings: dict[str, Any] = {**client_settings(cluster), "socket.timeout.ms": int(TIMEOUT * 1000)}
    return AdminClient({**settings, "logger": _librdkafka_log})


def reachable(cluster: Cluster) -> tuple[bool, str]:
    check = connectivity_check(cluster)
    return bool(check["ok"]), str(check.get("error", ""))


def committed(client: AdminClient, group: str) -> dict[Partition, int]:
    """The group's committed offsets, every topic; partitions with no commit are left out."""
    request = [ConsumerGroupTopicPartitions(group)]
    result = client.list_consumer_group_offsets(request, request_timeout=TIMEOUT)[group].result(timeout=TIMEOUT)
    return {
        (tp.topic, tp.partition): tp.offset
        for tp in result.topic_partitions or []
        if tp.error is None and tp.offset >= 0
    }


@dataclass(frozen=True)
class GroupState:
    group: str
    state: str
    members: list[str]

    @property
    def empty(self) -> bool:
        """No members and not rebalancing: offsets may be written (the broker refuses them otherwise anyway)."""
        return not self.members and self.state in {s.name for s in EMPTY_STATES}


def describe(client: AdminClient, groups: list[str]) -> dict[str, GroupState]:
    futures = client.describe_consumer_groups(groups, request_timeout=TIMEOUT)
    states = {}
    for group, future in futures.items():
        description = future.result(timeout=TIMEOUT)
        members = [f"{m.client_id}@{m.host}" for m in description.members or []]
        states[group] = GroupState(group, description.state.name, members)
    return states


def end_offsets(cluster: Cluster, partitions: list[Partition]) -> dict[Partition, int]:
    consumer = InternalClients().consumer(cluster_config(cluster), "failover-end-offsets")
    try:
        return {
            (t, p): int(consumer.get_watermark_offsets(TopicPartition(t, p), timeout=TIMEOUT)[1]) for t, p in partitions
        }
    finally:
        consumer.close()


def alter(client: AdminClient, group: str, offsets: dict[Partition, int]) -> dict[Partition, str]:
    """Write the offsets into the group; returns the partitions the broker refused, with its reason."""
    tps = [TopicPartition(t, p, o) for (t, p), o in sorted(offsets.items())]
    future = client.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(group, tps)])[group]
    result = future.result(timeout=TIMEOUT)
    return {(tp.topic, tp.partition): str(tp.error) for tp in result.topic_partitions or [] if tp.error is not None}


def acls(client: AdminClient, resource_type: ResourceType, name: str) -> list[AclBinding] | None:
    """ACL bindings on one resource, or None when the cluster has no authorizer (nothing to compare)."""
    wanted = AclBindingFilter(
        resource_type, name, ResourcePatternType.ANY, None, None, AclOperation.ANY, AclPermissionType.ANY
    )
    try:
        return list(client.describe_acls(wanted, request_timeout=TIMEOUT).result(timeout=TIMEOUT))
    except KafkaException as exc:
        if exc.args[0].code() == KafkaError.SECURITY_DISABLED:
            return None
        raise
