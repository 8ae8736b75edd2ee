"""Checkpoints and translated offsets through the API, on real clusters replicated by the real engine."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException
from rest_framework.test import APIClient

from controlplane.clusters import reads
from controlplane.clusters.models import Cluster
from controlplane.flows import offsets
from controlplane.flows.models import Flow
from controlplane.flows.services import flow_config
from replication.emitters.checkpoints import CheckpointEmitter
from replication.kafka.internaltopics import TopicTail
from tests.support.kafka import create_topic, end_offsets, unique_topic
from tests.support.replication import produce_known
from tests.support.translation import place_groups, replicate

Api = Callable[[str | None], APIClient]


def replicated_flow(kafka_clusters: dict[str, str], topic: str) -> Flow:
    west = Cluster.objects.create(alias="us-west", bootstrap_servers=kafka_clusters["us-west"])
    east = Cluster.objects.create(alias="us-east", bootstrap_servers=kafka_clusters["us-east"])
    flow = Flow.objects.create(source=west, target=east, topics=[topic], emit_heartbeats_enabled=False)
    config = flow_config(flow)
    create_topic(kafka_clusters["us-west"], topic)
    produce_known(kafka_clusters["us-west"], topic, partitions=1, count=100)
    remote = f"us-west.{topic}"

    def caught_up() -> bool:
        try:
            return end_offsets(kafka_clusters["us-east"], remote, [0]) == {0: 100}
        except KafkaException:
            return False

    replicate(config, caught_up, what=f"{remote} caught up")
    return flow


@pytest.mark.kafka
@pytest.mark.django_db
def test_a_viewer_reads_a_groups_checkpoints_and_translated_offsets(api: Api, kafka_clusters: dict[str, str]) -> None:
    topic = unique_topic("api-offsets")
    flow = replicated_flow(kafka_clusters, topic)
    [group] = place_groups(kafka_clusters["us-west"], unique_topic("api-group"), topic, {0: [40]})
    emitter = CheckpointEmitter(flow_config(flow))
    try:
        emitter.run_once()
    finally:
        emitter.close()
    client = api("viewer")

    translated = client.get(f"/api/v1/flows/{flow.pk}/translated-offsets/", {"group": group})
    assert translated.status_code == 200, translated.content
    [row] = translated.json()
    assert (row["topic"], row["remote_topic"], row["upstream_offset"]) == (topic, f"us-west.{topic}", 40)
    assert (row["downstream_offset"], row["method"], row["approximate"], row["lag"]) == (40, "sync", False, 60)

    checkpoints = client.get(f"/api/v1/flows/{flow.pk}/checkpoints/", {"group": group})
    assert checkpoints.status_code == 200, checkpoints.content
    [checkpoint] = checkpoints.json()
    assert checkpoint["consumer_group_id"] == group and checkpoint["topic"] == f"us-west.{topic}"
    assert (checkpoint["upstream_offset"], checkpoint["downstream_offset"]) == (40, 40)


@pytest.mark.django_db
def test_translated_offsets_need_a_group(api: Api) -> None:
    west = Cluster.objects.create(alias="us-west", bootstrap_servers="127.0.0.1:1")
    flow = Flow.objects.create(source=west, target=Cluster.objects.create(alias="e", bootstrap_servers="h:1"))
    response = api("viewer").get(f"/api/v1/flows/{flow.pk}/translated-offsets/")
    assert response.status_code == 400
    assert "group" in response.json()


@pytest.mark.django_db
def test_an_unreadable_cluster_is_a_400_naming_it(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(tail: TopicTail, timeout: float = 0) -> Any:
        raise KafkaException(KafkaError(KafkaError._TRANSPORT, "Connection refused"))

    monkeypatch.setattr(offsets, "read_checkpoints", refuse)
    # The cluster answers the connectivity check that comes first, then fails the read itself.
    monkeypatch.setattr(reads, "connectivity_check", lambda cluster: {"ok": True})
    west = Cluster.objects.create(alias="us-west", bootstrap_servers="127.0.0.1:1")
    east = Cluster.objects.create(alias="us-east", bootstrap_servers="127.0.0.1:2")
    flow = Flow.objects.create(source=west, target=east)
    response = api("viewer").get(f"/api/v1/flows/{flow.pk}/checkpoints/")
    assert response.status_code == 400
    assert response.json() == {"detail": "us-east: Connection refused"}
