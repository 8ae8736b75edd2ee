"""The observer lists each cluster's metadata once per run: at 10,000 partitions a listing costs the worker tens of
milliseconds of Python, and it listed every cluster three times (reachability, hops, heartbeat topics) every 15 s."""

from __future__ import annotations

import collections
from types import SimpleNamespace
from typing import Any

import pytest
from django.utils import timezone

from controlplane.clusters import services as cluster_services
from controlplane.clusters.models import Cluster
from controlplane.monitoring.models import ClusterObservation
from controlplane.monitoring.services import observe, readers
from replication.kafka import clients

LISTED: collections.Counter[str] = collections.Counter()
TOPICS = {
    "127.0.0.1:1": ["orders", "heartbeats"],
    "127.0.0.1:2": ["us-west.orders", "us-west.heartbeats", "heartbeats", "backup.us-west.heartbeats", "broken"],
}


class FakeAdmin:
    """An AdminClient whose metadata is TOPICS of its bootstrap servers ("broken" carries an error)."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.servers = str(config["bootstrap.servers"])

    def list_topics(self, *_: Any, **__: Any) -> SimpleNamespace:
        LISTED[self.servers] += 1
        topics = {t: SimpleNamespace(error="UNKNOWN" if t == "broken" else None) for t in TOPICS[self.servers]}
        broker = SimpleNamespace(id=1, host="127.0.0.1", port=int(self.servers.rsplit(":", 1)[1]))
        return SimpleNamespace(topics=topics, brokers={1: broker})

    def poll(self, *_: Any) -> int:
        return 0


@pytest.mark.django_db
def test_the_observation_lists_each_clusters_metadata_once_per_run(monkeypatch: pytest.MonkeyPatch) -> None:
    LISTED.clear()
    monkeypatch.setattr(cluster_services, "AdminClient", FakeAdmin)
    monkeypatch.setattr(clients, "AdminClient", FakeAdmin)  # where the old code listed again (MirrorClient)
    read: list[tuple[str, str]] = []
    monkeypatch.setattr(readers, "newest_heartbeat", lambda cluster, topic: read.append((cluster.alias, topic)))
    west = Cluster.objects.create(alias="us-west", bootstrap_servers="127.0.0.1:1")
    east = Cluster.objects.create(alias="us-east", bootstrap_servers="127.0.0.1:2")

    assert observe.observe_all(timezone.now()) == 2

    assert LISTED == {"127.0.0.1:1": 1, "127.0.0.1:2": 1}
    seen = {o.cluster_id: o for o in ClusterObservation.objects.all()}
    assert (seen[west.pk].reachable, seen[west.pk].topic_count, seen[west.pk].upstream_hops) == (True, 2, {})
    assert seen[east.pk].topic_count == 5
    assert seen[east.pk].upstream_hops == {"us-west": 1, "backup": 1}
    assert sorted(read) == [
        ("us-east", "backup.us-west.heartbeats"),
        ("us-east", "heartbeats"),
        ("us-east", "us-west.heartbeats"),
        ("us-west", "heartbeats"),
    ]
