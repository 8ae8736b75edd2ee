"""MirrorClient reads through the API: upstream clusters, hops and remote topics, from heartbeat topic names."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest
from confluent_kafka import KafkaError, KafkaException
from rest_framework.test import APIClient

from controlplane.clusters import reads
from controlplane.clusters.models import Cluster
from controlplane.flows import mirror
from tests.support.kafka import create_topic

Api = Callable[[str | None], APIClient]


@pytest.mark.kafka
@pytest.mark.django_db
def test_a_viewer_reads_upstream_clusters_hops_and_remote_topics(api: Api, kafka_clusters: dict[str, str]) -> None:
    near, far = f"near{uuid.uuid4().hex[:8]}", f"far{uuid.uuid4().hex[:8]}"
    bootstrap = kafka_clusters["backup"]
    for topic in (f"{near}.heartbeats", f"{near}.{far}.heartbeats", f"{near}.orders"):
        create_topic(bootstrap, topic)
    cluster = Cluster.objects.create(alias="backup", bootstrap_servers=bootstrap)
    client, url = api("viewer"), f"/api/v1/clusters/{cluster.pk}/"

    upstream = client.get(url + "upstream-clusters/")
    assert upstream.status_code == 200, upstream.content
    assert {near, far} <= set(upstream.json()["upstream_clusters"])
    assert client.get(url + "hops/", {"upstream": near}).json()["hops"] == 1
    assert client.get(url + "hops/", {"upstream": far}).json()["hops"] == 2
    assert client.get(url + "hops/", {"upstream": "nowhere"}).json()["hops"] == -1
    remote = client.get(url + "remote-topics/", {"source": near}).json()
    assert remote["remote_topics"] == sorted([f"{near}.heartbeats", f"{near}.{far}.heartbeats", f"{near}.orders"])


@pytest.mark.django_db
def test_hops_need_an_upstream_alias(api: Api) -> None:
    cluster = Cluster.objects.create(alias="backup", bootstrap_servers="127.0.0.1:1")
    response = api("viewer").get(f"/api/v1/clusters/{cluster.pk}/hops/")
    assert response.status_code == 400
    assert "upstream" in response.json()


@pytest.mark.django_db
def test_an_unreachable_cluster_is_a_400_naming_it(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: object) -> set[str]:
        raise KafkaException(KafkaError(KafkaError._TRANSPORT, "Connection refused"))

    monkeypatch.setattr(mirror.MirrorClient, "topics", refuse)
    # The cluster answers the connectivity check that comes first, then fails the read itself.
    monkeypatch.setattr(reads, "connectivity_check", lambda cluster: {"ok": True})
    cluster = Cluster.objects.create(alias="backup", bootstrap_servers="127.0.0.1:1")
    response = api("viewer").get(f"/api/v1/clusters/{cluster.pk}/upstream-clusters/")
    assert response.status_code == 400
    assert response.json() == {"detail": "backup: Connection refused"}


@pytest.mark.django_db
def test_a_read_that_times_out_says_so_rather_than_nothing(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    def time_out(self: object) -> set[str]:
        raise TimeoutError()  # what an admin future's result(timeout=...) raises: no message

    monkeypatch.setattr(mirror.MirrorClient, "topics", time_out)
    monkeypatch.setattr(reads, "connectivity_check", lambda cluster: {"ok": True})
    cluster = Cluster.objects.create(alias="backup", bootstrap_servers="127.0.0.1:1")
    response = api("viewer").get(f"/api/v1/clusters/{cluster.pk}/upstream-clusters/")
    assert response.status_code == 400
    assert response.json() == {"detail": "backup: no answer from the cluster in time"}


@pytest.mark.django_db
def test_a_cluster_lost_during_the_read_is_named_with_the_brokers_error(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    def lost(self: object) -> set[str]:
        raise KafkaException(KafkaError(KafkaError._TRANSPORT, "Failed to get metadata: Local: Broker transport"))

    checks = iter([{"ok": True}, {"ok": False, "error": "127.0.0.1:1/bootstrap: Connect to ipv4#127.0.0.1:1 failed"}])
    monkeypatch.setattr(mirror.MirrorClient, "topics", lost)
    monkeypatch.setattr(reads, "connectivity_check", lambda cluster: next(checks))
    cluster = Cluster.objects.create(alias="backup", bootstrap_servers="127.0.0.1:1")
    response = api("viewer").get(f"/api/v1/clusters/{cluster.pk}/upstream-clusters/")
    assert response.status_code == 400
    assert response.json() == {"detail": "backup: 127.0.0.1:1/bootstrap: Connect to ipv4#127.0.0.1:1 failed"}
