"""The dashboard's heartbeat hops: remote-topic paths between clusters with no flow between them, never a cluster
to itself (its own heartbeats back round a cycle of flows, which the graph cannot draw)."""

from __future__ import annotations

import pytest
from django.utils import timezone

from controlplane.clusters.models import Cluster
from controlplane.monitoring.models import ClusterObservation
from controlplane.monitoring.services.graph import hops


@pytest.mark.django_db
def test_a_clusters_own_heartbeats_back_round_a_cycle_are_no_hop() -> None:
    west, east, backup = (
        Cluster.objects.create(alias=a, bootstrap_servers=f"{a}:9092") for a in ("us-west", "us-east", "backup")
    )
    now = timezone.now()
    # us-west reads us-east.us-west.heartbeats (itself, 2 hops back) and backup.us-east.heartbeats (backup, 2 hops).
    ClusterObservation.objects.create(cluster=west, at=now, reachable=True, upstream_hops={"us-west": 2, "backup": 2})
    ClusterObservation.objects.create(cluster=backup, at=now, reachable=True, upstream_hops={"us-west": 2})
    found = hops(list(Cluster.objects.order_by("pk")), direct={("us-east", "us-west")})
    assert found == [
        {"source": "backup", "target": "us-west", "hops": 2},
        {"source": "us-west", "target": "backup", "hops": 2},
    ]
    assert east.pk  # a cluster not observed yet has no hops
