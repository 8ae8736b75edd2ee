"""Beat's heartbeat collection reads the clusters side by side within one deadline, and skips a cluster the observer
is backing off from: one unreachable cluster neither stops nor delays the others' heartbeats."""

from __future__ import annotations

import threading
import time
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from controlplane.clusters.models import Cluster
from controlplane.monitoring.models import ClusterObservation
from controlplane.reports import services

pytestmark = pytest.mark.django_db


def test_a_hanging_cluster_and_one_backed_off_from_cost_the_others_nothing(
    monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    settings.MIRRORPLANE_FACTS_ENABLED = True
    release = threading.Event()
    read: list[str] = []

    def collect(clusters: dict[str, dict[str, str]], alias: str, timeout: float) -> int:
        read.append(alias)
        assert set(clusters) == {"healthy", "hangs", "down"}  # every registered cluster counts as a source
        if alias == "hangs":
            release.wait(30)
        return 7

    monkeypatch.setattr(services, "_collect_heartbeats", collect)
    monkeypatch.setattr(services, "HEARTBEAT_GRACE_SECONDS", 0.0)
    clusters = {
        a: Cluster.objects.create(alias=a, bootstrap_servers="127.0.0.1:9092") for a in ("healthy", "hangs", "down")
    }
    now = timezone.now()
    ClusterObservation.objects.create(
        cluster=clusters["down"], at=now, reachable=False, failures=2, next_probe_at=now + timedelta(seconds=30)
    )
    started = time.monotonic()
    try:
        assert services.collect_heartbeats(timeout=1.0) == 7
    finally:
        release.set()
    assert time.monotonic() - started < 3.0
    assert sorted(read) == ["hangs", "healthy"]
