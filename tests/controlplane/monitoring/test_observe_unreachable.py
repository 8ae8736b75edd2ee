"""The observer reads clusters side by side under one deadline, and an unreachable cluster is probed at a doubling
back-off instead of every pass: one bad cluster never holds up the others, nor costs every pass its timeout."""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from controlplane.clusters.models import Cluster
from controlplane.monitoring.models import ClusterObservation
from controlplane.monitoring.services import observe

pytestmark = pytest.mark.django_db


class Clusters:
    """read_cluster stand-in: "hangs" blocks until released, "refused" fails at once, the rest answer."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.read: list[str] = []
        self.refusing = {"refused"}

    def __call__(self, cluster: Cluster) -> dict[str, object]:
        self.read.append(cluster.alias)
        if cluster.alias == "hangs":
            self.release.wait(30)
        if cluster.alias in self.refusing:
            return {"reachable": False, "error": "127.0.0.1:1: Connection refused"}
        return {"reachable": True, "error": "", "topic_count": 3, "upstream_hops": {}, "heartbeats": {}}


@pytest.fixture
def clusters(monkeypatch: pytest.MonkeyPatch) -> Clusters:
    fake = Clusters()
    monkeypatch.setattr(observe, "read_cluster", fake)
    monkeypatch.setattr(observe, "OBSERVE_DEADLINE_SECONDS", 1.0)
    for alias in ("healthy", "hangs", "refused"):
        Cluster.objects.create(alias=alias, bootstrap_servers="127.0.0.1:9092")
    yield fake
    fake.release.set()


def seen() -> dict[str, ClusterObservation]:
    return {o.cluster.alias: o for o in ClusterObservation.objects.select_related("cluster")}


def test_a_hanging_cluster_costs_the_pass_its_deadline_and_the_others_are_observed(clusters: Clusters) -> None:
    started = time.monotonic()
    assert observe.observe_all(timezone.now()) == 1
    assert time.monotonic() - started < 3.0  # the hanging read would take 30 s
    observed = seen()
    assert observed["healthy"].reachable and observed["healthy"].topic_count == 3
    assert (observed["hangs"].reachable, observed["hangs"].error) == (False, "no answer within 1 s")
    assert (observed["refused"].reachable, observed["refused"].error) == (False, "127.0.0.1:1: Connection refused")


def test_an_unreachable_cluster_is_probed_at_a_doubling_backoff_and_at_once_when_it_answers(
    clusters: Clusters,
) -> None:
    clusters.release.set()
    clusters.refusing.add("hangs")
    t0 = timezone.now()

    def run_at(seconds: float) -> list[str]:
        clusters.read.clear()
        observe.observe_all(t0 + timedelta(seconds=seconds))
        return sorted(clusters.read)

    assert run_at(0) == ["hangs", "healthy", "refused"]
    first = seen()["refused"]
    assert (first.failures, first.next_probe_at) == (1, t0 + timedelta(seconds=15))
    assert run_at(10) == ["healthy"]  # backing off: not asked, still shown unreachable with the last error
    waiting = seen()["refused"]
    assert (waiting.reachable, waiting.error, waiting.at) == (False, "127.0.0.1:1: Connection refused", at(t0, 10))
    assert run_at(15) == ["hangs", "healthy", "refused"]
    assert seen()["refused"].next_probe_at == t0 + timedelta(seconds=15 + 30)
    assert run_at(40) == ["healthy"]
    assert run_at(45) == ["hangs", "healthy", "refused"]
    assert seen()["refused"].next_probe_at == t0 + timedelta(seconds=45 + 60)
    for failures in (3, 4, 5):  # 120 s from then on: MIRRORPLANE_UNREACHABLE_PROBE_MAX_SECONDS
        probe = seen()["refused"]
        assert probe.failures == failures and probe.next_probe_at is not None
        assert run_at((probe.next_probe_at - t0).total_seconds()) == ["hangs", "healthy", "refused"]
        assert seen()["refused"].next_probe_at == probe.next_probe_at + timedelta(seconds=120)

    clusters.refusing.discard("refused")  # it answers at its next probe, and is asked every pass again
    nxt = (seen()["refused"].next_probe_at - t0).total_seconds()
    assert "refused" in run_at(nxt)
    assert (seen()["refused"].reachable, seen()["refused"].failures, seen()["refused"].next_probe_at) == (
        True,
        0,
        None,
    )
    assert "refused" in run_at(nxt + 1)


def test_editing_a_cluster_ends_its_backoff(clusters: Clusters) -> None:
    clusters.release.set()
    t0 = timezone.now()
    observe.observe_all(t0)
    Cluster.objects.filter(alias="refused").update(updated_at=t0 + timedelta(seconds=2))
    clusters.read.clear()
    observe.observe_all(t0 + timedelta(seconds=3))
    assert "refused" in clusters.read


def at(t0: datetime, seconds: float) -> datetime:
    return t0 + timedelta(seconds=seconds)
