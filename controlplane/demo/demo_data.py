"""Demo data: the local clusters registered, a few topics, and flows that form a small replication graph.

A secured cluster (``backup`` when the demo runs on Kafka 3.x or 4.x) is registered with the least-privilege
principal's credentials and its CA, and that principal is granted exactly the ACLs of the demo's flows that use it
(``flow_grants``), by the cluster's super user through Kafka's admin API.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, NewTopic

from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from controlplane.flows.services import flow_config
from controlplane.reports.services import HEARTBEAT_GROUP
from replication.clientlog import logged
from replication.kafka.acls import Grant, flow_grants

DEMO_TOPICS = {"orders": 4, "payments": 2}
# us-west feeds us-east (aggregation), which is backed up to backup: a two-hop chain on the graph.
DEMO_FLOWS = [("us-west", "us-east", [r"orders|payments"]), ("us-east", "backup", [r"us-west\..*"])]
FLOW_DEFAULTS = {"refresh_topics_interval_seconds": 10, "emit_checkpoints_interval_seconds": 5}
# Into a secured cluster the flow does not copy ACLs: that needs ALTER on the target's cluster resource, which lets its
# holder grant itself anything (replication/kafka/acls.py); the demo's sources are PLAINTEXT and hold no ACL to copy.
SECURED_TARGET_DEFAULTS = {"sync_topic_acls_enabled": False}
ACL_TIMEOUT_SECONDS = 30.0
# What the control plane itself needs beyond the flows' grants, on every cluster it reads: the reports' heartbeat
# collector commits how far it read the heartbeat topics (which the flows' grants let it read) in this group.
CONTROL_PLANE_GRANTS = [Grant("target", "GROUP", HEARTBEAT_GROUP, "LITERAL", "READ")]


@dataclass(frozen=True)
class SecuredCluster:
    """A secured local cluster's librdkafka settings: as the flows' principal (registered) and as its super user
    (which grants that principal its ACLs). Both hold a secret: they are never printed."""

    principal: str
    client: Mapping[str, str]
    admin: Mapping[str, str]

    def registration(self) -> dict[str, str]:
        """The Cluster fields an operator would type for the principal: the SASL user and password, and the CA."""
        return {
            "security_protocol": self.client["security.protocol"],
            "sasl_mechanism": self.client["sasl.mechanism"],
            "sasl_username": self.client["sasl.username"],
            "sasl_password": self.client["sasl.password"],
            "ssl_ca_pem": Path(self.client["ssl.ca.location"]).read_text(),
        }


def seed(bootstraps: dict[str, str], secured: Mapping[str, SecuredCluster] | None = None) -> list[str]:
    """Register the clusters, create the demo topics on us-west and the demo flows, and grant each secured cluster's
    principal what its flows need; idempotent, and the credentials are registered again at every start."""
    secured = secured or {}
    clusters = {alias: _register(alias, bootstrap, secured.get(alias)) for alias, bootstrap in bootstraps.items()}
    _create_topics(bootstraps["us-west"])
    for cluster in secured.values():
        _create_acls(cluster, CONTROL_PLANE_GRANTS)
    created = []
    for source, target, topics in DEMO_FLOWS:
        defaults: dict[str, Any] = {"topics": topics, **FLOW_DEFAULTS}
        if target in secured:
            defaults |= SECURED_TARGET_DEFAULTS
        flow, new = Flow.objects.get_or_create(source=clusters[source], target=clusters[target], defaults=defaults)
        if new:
            created.append(f"{source}->{target}")
        if source in secured:
            # Grants on a flow's source name its topics and groups; the demo's secured cluster is only a target.
            raise ValueError(f"{source}->{target}: the demo grants ACLs only on a secured flow target")
        if target in secured:
            _grant(flow, secured[target])
    return created


def _register(alias: str, bootstrap: str, secured: SecuredCluster | None) -> Cluster:
    cluster = Cluster.objects.filter(alias=alias).first() or Cluster(alias=alias)
    values: dict[str, str] = {"bootstrap_servers": bootstrap}
    if secured is not None:
        values |= secured.registration()
    cluster.apply(values)
    cluster.full_clean()
    cluster.save()
    return cluster


def _grant(flow: Flow, cluster: SecuredCluster) -> None:
    """Grant the principal the flow's ACLs on its target. Under the default replication policy they name the remote
    topics' prefix and the flow's internal topics, never a source topic; a group only with sync.group.offsets."""
    _create_acls(cluster, [grant for grant in flow_grants(flow_config(flow), ()) if grant.cluster == "target"])


def _create_acls(cluster: SecuredCluster, grants: list[Grant]) -> None:
    admin = AdminClient(logged(dict(cluster.admin)))
    bindings = [grant.binding(f"User:{cluster.principal}") for grant in grants]
    for future in admin.create_acls(bindings).values():
        future.result(timeout=ACL_TIMEOUT_SECONDS)  # an ACL that exists already is created again without error


def _create_topics(bootstrap: str) -> None:
    admin = AdminClient(logged({"bootstrap.servers": bootstrap}))
    existing = admin.list_topics(timeout=10).topics
    new = [NewTopic(name, n, 1) for name, n in DEMO_TOPICS.items() if name not in existing]
    for future in admin.create_topics(new).values() if new else []:
        try:
            future.result(timeout=30)
        except KafkaException as exc:
            # A restarted broker may list no topics while it loads its logs, though its metadata (the KRaft log, or
            # ZooKeeper on 2.3.0) has them: they exist.
            if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                raise
