"""Demo data: the local clusters registered, a few topics, and flows that form a small replication graph."""

from __future__ import annotations

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient, NewTopic

from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from replication.kafka.clientlog import logged

DEMO_TOPICS = {"orders": 4, "payments": 2}
# us-west feeds us-east (aggregation), which is backed up to backup: a two-hop chain on the graph.
DEMO_FLOWS = [("us-west", "us-east", [r"orders|payments"]), ("us-east", "backup", [r"us-west\..*"])]


def seed(bootstraps: dict[str, str]) -> list[str]:
    """Register the clusters, create the demo topics on us-west and the demo flows; idempotent."""
    clusters = {
        alias: Cluster.objects.update_or_create(alias=alias, defaults={"bootstrap_servers": bootstrap})[0]
        for alias, bootstrap in bootstraps.items()
    }
    _create_topics(bootstraps["us-west"])
    created = []
    for source, target, topics in DEMO_FLOWS:
        _, new = Flow.objects.get_or_create(
            source=clusters[source],
            target=clusters[target],
            defaults={"topics": topics, "refresh_topics_interval_seconds": 10, "emit_checkpoints_interval_seconds": 5},
        )
        if new:
            created.append(f"{source}->{target}")
    return created


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
