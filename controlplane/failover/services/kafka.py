"""The Kafka admin operations a failover needs, each with a short deadline: consumer groups (states, committed
offsets, offset writes: replication/'s ConsumerGroups, the rules group offset sync follows too), end offsets and
ACLs. Credentials stay inside the client settings; errors are librdkafka's text, which never includes them."""

from __future__ import annotations

import logging
from typing import Any

from confluent_kafka import KafkaError, KafkaException, TopicPartition
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
from replication.clientlog import logged
from replication.kafka.clients import ClientFactory
from replication.offsets.groupoffsets import ConsumerGroups, Partition

log = logging.getLogger(__name__)
TIMEOUT = 10.0


def admin(cluster: Cluster) -> AdminClient:
    settings: dict[str, Any] = {**client_settings(cluster), "socket.timeout.ms": int(TIMEOUT * 1000)}
    return AdminClient(logged(settings))


def reachable(cluster: Cluster) -> tuple[bool, str]:
    check = connectivity_check(cluster)
    return bool(check["ok"]), str(check.get("error", ""))


def groups(cluster: Cluster) -> ConsumerGroups:
    return ConsumerGroups(admin(cluster), TIMEOUT)


def end_offsets(cluster: Cluster, partitions: list[Partition]) -> dict[Partition, int]:
    consumer = ClientFactory().consumer(cluster_config(cluster), "failover-end-offsets")
    try:
        return {
            (t, p): int(consumer.get_watermark_offsets(TopicPartition(t, p), timeout=TIMEOUT)[1]) for t, p in partitions
        }
    finally:
        consumer.close()


def acls(client: AdminClient, resource_type: ResourceType, name: str) -> list[AclBinding] | None:
    """ACL bindings on one resource, or None when the cluster has no authorizer (nothing to compare)."""
    wanted = AclBindingFilter(
        resource_type,
        name,
        ResourcePatternType.ANY,
        None,  # type: ignore[arg-type]  # any principal: its docstring says None matches any, its annotation says str
        None,  # type: ignore[arg-type]  # any host: its docstring says None matches any, its annotation says str
        AclOperation.ANY,
        AclPermissionType.ANY,
    )
    try:
        return list(client.describe_acls(wanted, request_timeout=TIMEOUT).result(timeout=TIMEOUT))
    except KafkaException as exc:
        if exc.args[0].code() == KafkaError.SECURITY_DISABLED:
            return None
        raise
