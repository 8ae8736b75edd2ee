"""The ACLs a flow's principal needs on its source and its target, and no more (least privilege).

`flow_grants` lists them for one flow; `grant_table` renders them for an example flow, with the properties that
call for each (the README's least-privilege table).

READ, WRITE and ALTER imply DESCRIBE in Kafka's authorizer, so DESCRIBE is granted only where nothing implies it.
ALTER on the target cluster lets its holder create any ACL: grant it only if ACL sync is wanted (as for MM2).
With the identity replication policy, remote topics keep their names, so the target's grants name each topic.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from confluent_kafka.admin import AclBinding, AclOperation, AclPermissionType, ResourcePatternType, ResourceType

from replication.config import PROPERTIES, ClusterConfig, FlowConfig
from replication.kafka.clients import transactional_id
from replication.kafka.provisioning import internal_topics
from replication.mm2.policy import HEARTBEATS_TOPIC, IdentityReplicationPolicy

CLUSTER_RESOURCE = "kafka-cluster"  # the one name of the cluster resource
CLIENT_GROUP_PREFIX = "mirrorplane-"  # every group id the flow's clients carry (replication.kafka.clients)
_INTERNAL_OPERATIONS = (AclOperation.CREATE, AclOperation.WRITE, AclOperation.READ)


@dataclass(frozen=True, order=True)
class Grant:
    """One ALLOW ACL for the flow's principal, from any host."""

    cluster: str  # "source" or "target"
    resource: str  # TOPIC, GROUP, TRANSACTIONAL_ID or CLUSTER
    name: str
    pattern: str  # LITERAL or PREFIXED
    operation: str

    def binding(self, principal: str) -> AclBinding:
        resource = ResourceType.BROKER if self.resource == "CLUSTER" else ResourceType[self.resource]
        return AclBinding(
            resource,
            self.name,
            ResourcePatternType[self.pattern],
            principal,
            "*",
            AclOperation[self.operation],
            AclPermissionType.ALLOW,
        )

    def kafka_acls(self, principal: str, bootstrap: str = "<bootstrap>") -> str:
        """The same grant as a `kafka-acls` command line."""
        option = {
            "TOPIC": "--topic",
            "GROUP": "--group",
            "TRANSACTIONAL_ID": "--transactional-id",
            "CLUSTER": "--cluster",
        }[self.resource]
        target = option if self.resource == "CLUSTER" else f"{option} '{self.name}'"
        pattern = " --resource-pattern-type prefixed" if self.pattern == "PREFIXED" else ""
        return (
            f"kafka-acls --bootstrap-server {bootstrap} --add --allow-principal '{principal}' "
            f"--operation {self.operation.title().replace('_', '')} {target}{pattern}"
        )


def flow_grants(flow: FlowConfig, topics: Iterable[str], groups: Iterable[str] = ()) -> list[Grant]:
    """The ACLs the flow's principal needs, given the source topics it replicates and the groups it checkpoints."""
    source_topics = sorted({*topics, HEARTBEATS_TOPIC})
    grants: set[Grant] = set()

    def add(cluster: str, resource: str, name: str, pattern: str, *operations: AclOperation) -> None:
        grants.update(Grant(cluster, resource, name, pattern, op.name) for op in operations)

    for topic in source_topics:
        add("source", "TOPIC", topic, "LITERAL", AclOperation.READ)
        if flow.sync_topic_configs_enabled:
            add("source", "TOPIC", topic, "LITERAL", AclOperation.DESCRIBE_CONFIGS)
    for internal in internal_topics(flow):
        if internal.name == HEARTBEATS_TOPIC:  # written (MM2's heartbeat connectors), created and stamped, not read
            ops = (AclOperation.CREATE, AclOperation.WRITE, AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS)
            add(internal.cluster, "TOPIC", HEARTBEATS_TOPIC, "LITERAL", *ops)
        else:
            add(internal.cluster, "TOPIC", internal.name, "LITERAL", *_INTERNAL_OPERATIONS)
    for cluster in ("source", "target"):
        add(cluster, "GROUP", CLIENT_GROUP_PREFIX, "PREFIXED", AclOperation.DESCRIBE)
    remote_ops = (
        AclOperation.CREATE,
        AclOperation.WRITE,
        AclOperation.READ,
        AclOperation.ALTER,
        AclOperation.DESCRIBE_CONFIGS,
        AclOperation.ALTER_CONFIGS,
    )
    policy = flow.policy()
    if isinstance(policy, IdentityReplicationPolicy):
        for topic in source_topics:
            add("target", "TOPIC", policy.format_remote_topic(flow.source.alias, topic), "LITERAL", *remote_ops)
    else:
        add("target", "TOPIC", f"{flow.source.alias}{flow.replication_policy_separator}", "PREFIXED", *remote_ops)
    if flow.exactly_once:
        prefix = transactional_id(flow, 0).removesuffix("0")
        add("target", "TRANSACTIONAL_ID", prefix, "PREFIXED", AclOperation.WRITE)
    for group in sorted(set(groups)):
        if flow.emit_checkpoints_enabled:
            add("source", "GROUP", group, "LITERAL", AclOperation.DESCRIBE)
        if flow.sync_group_offsets_enabled:
            add("target", "GROUP", group, "LITERAL", AclOperation.READ)
    if flow.sync_topic_acls_enabled:
        add("source", "CLUSTER", CLUSTER_RESOURCE, "LITERAL", AclOperation.DESCRIBE)
        add("target", "CLUSTER", CLUSTER_RESOURCE, "LITERAL", AclOperation.ALTER)
    return sorted(grants)


# The properties that call for grants, each with what it needs switched on beside it.
_FEATURES: dict[str, dict[str, bool]] = {
    "sync_topic_configs_enabled": {},
    "emit_heartbeats_enabled": {},
    "emit_offset_syncs_enabled": {},
    "emit_checkpoints_enabled": {"emit_offset_syncs_enabled": True},
    "sync_group_offsets_enabled": {"emit_offset_syncs_enabled": True, "emit_checkpoints_enabled": True},
    "sync_topic_acls_enabled": {},
    "exactly_once": {},
}


def example_flow(**features: Any) -> FlowConfig:
    """`src->dst` with every property of _FEATURES off but those given."""
    off = dict.fromkeys(_FEATURES, False)
    source, target = (ClusterConfig(alias, {"bootstrap.servers": "127.0.0.1:9092"}) for alias in ("src", "dst"))
    return FlowConfig(source, target, topics=("orders",), **(off | features))


def grant_table(topics: tuple[str, ...] = ("orders",), groups: tuple[str, ...] = ("app",)) -> str:
    """A markdown table of the grants of `src->dst` replicating topics and checkpointing groups: each row with the
    MM2 property that calls for it, or "always"."""
    always = set(flow_grants(example_flow(), topics, groups))
    when: dict[Grant, list[str]] = {grant: ["always"] for grant in always}
    for feature, needs in _FEATURES.items():
        base = set(flow_grants(example_flow(**needs), topics, groups))
        for grant in set(flow_grants(example_flow(**needs, **{feature: True}), topics, groups)) - base:
            when.setdefault(grant, []).append(f"`{PROPERTIES[feature].name}`")
    rows: dict[tuple[str, str, str, str, str], list[str]] = {}
    for grant in sorted(when):
        key = (grant.cluster, grant.resource, grant.name, grant.pattern, " or ".join(when[grant]))
        rows.setdefault(key, []).append(grant.operation)
    lines = ["| cluster | resource | name | pattern | operations | needed when |", "|---|---|---|---|---|---|"]
    for (cluster, resource, name, pattern, needed), operations in rows.items():
        lines.append(f"| {cluster} | {resource} | `{name}` | {pattern} | {', '.join(operations)} | {needed} |")
    return "\n".join(lines) + "\n"
