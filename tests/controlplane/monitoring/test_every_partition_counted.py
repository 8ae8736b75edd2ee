"""Every source partition of a flow is listed and counted in its lag on real brokers, those of a task no worker has
room for and of a paused flow included: source end offset minus the flow's stored position (the positions topic on
the target), the one figure the edge, the total-lag tile and the lag alert read."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from confluent_kafka import Producer
from django.utils import timezone
from rest_framework.test import APIClient

from controlplane.alerts.choices import AlertKind
from controlplane.alerts.services.figures import readings
from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from controlplane.monitoring.services.observe import observe_flow
from controlplane.monitoring.services.stopped import stopped_lag
from controlplane.orchestration.choices import TaskState
from controlplane.orchestration.models import TaskAssignment
from controlplane.orchestration.services.taskreports import Reporter
from replication.kafka import positions
from replication.kafka.internaltopics import COMPACTED_CONFIG, ensure_topic
from replication.metrics.registry import MetricsRegistry
from tests.support.kafka import admin, create_topic, end_offsets, unique_topic
from tests.support.replication import produce_known

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]
Api = Callable[[str | None], APIClient]


def store_positions(bootstrap: str, source_alias: str, stored: dict[tuple[str, int], int]) -> None:
    """What a task stores as it replicates: the next source offset per partition, in the target's positions topic."""
    topic = positions.positions_topic(source_alias)
    ensure_topic(admin(bootstrap), topic, COMPACTED_CONFIG)  # as the flow's provisioning creates it
    producer = Producer({"bootstrap.servers": bootstrap})
    positions.write(producer, topic, [(key, positions.Position(offset, offset)) for key, offset in stored.items()])
    assert producer.flush(30) == 0


def clusters(kafka_clusters: dict[str, str]) -> tuple[Cluster, Cluster]:
    source = Cluster.objects.create(alias="us-west", bootstrap_servers=kafka_clusters["us-west"])
    target = Cluster.objects.create(alias="us-east", bootstrap_servers=kafka_clusters["us-east"])
    return source, target


def figures(api: Api) -> tuple[Any, Any, Any]:
    body = api("viewer").get("/api/v1/dashboard/").json()
    alert = next(r.value for r in readings(timezone.now()) if r.kind == AlertKind.LAG_RECORDS)
    return body["edges"][0]["lag"], body["tiles"]["total_lag"], alert


def test_an_unplaced_tasks_partitions_are_listed_and_counted_from_the_stored_positions(
    kafka_clusters: dict[str, str], api: Api
) -> None:
    west, east = kafka_clusters["us-west"], kafka_clusters["us-east"]
    topic = unique_topic("unplaced-lag")
    create_topic(west, topic, partitions=3)
    produce_known(west, topic, 3, 3000)  # 1,000 records on each partition
    source, target = clusters(kafka_clusters)
    flow = Flow.objects.create(source=source, target=target, topics=[topic], tasks_max=2)
    # Task 0 runs partition 0 and reports a lag of 3; task 1 has partitions 1 and 2 and no worker has room for it.
    running = TaskAssignment.objects.create(
        flow=flow,
        task_id=0,
        partitions=[[topic, 0]],
        reported_partitions=[[topic, 0]],
        state=TaskState.RUNNING,
        lease_expires_at=timezone.now() + timedelta(hours=1),
    )
    TaskAssignment.objects.create(
        flow=flow, task_id=1, partitions=[[topic, 1], [topic, 2]], unplaced_reason="needs 1 slot, 0 free on 1 worker"
    )
    metrics = MetricsRegistry()
    metrics.set_lag(flow.name, topic, 0, 3)
    metrics.set_position(flow.name, topic, 0, 997)
    reporter = Reporter(flow.pk, running.pk, flow.name, 0)
    snapshot = metrics.snapshot()["flows"][flow.name]
    TaskAssignment.objects.filter(pk=running.pk).update(**reporter.assignment_fields(snapshot, [[topic, 0]]))
    reporter.write_partitions(snapshot)
    # Task 1 ran partition 1 up to 400 once, on another worker; partition 2 was never replicated.
    store_positions(east, "us-west", {(topic, 1): 400})

    observe_flow(flow, timezone.now())

    ends = end_offsets(west, topic, range(3))
    listed = api("viewer").get(f"/api/v1/flows/{flow.pk}/status/?limit=100").json()["partitions"]
    assert listed["count"] == 3
    rows = {p["partition"]: (p["task_id"], p["task_state"], p["position"], p["lag"]) for p in listed["results"]}
    assert rows == {
        0: (0, "running", 997, 3),
        1: (1, "unplaced", 400, ends[1] - 400),
        2: (1, "unplaced", None, ends[2]),
    }
    expected = 3 + (ends[1] - 400) + ends[2]
    assert figures(api) == (expected, expected, float(expected))


def test_a_paused_flows_lag_rises_as_records_are_produced(kafka_clusters: dict[str, str], api: Api) -> None:
    west, east = kafka_clusters["us-west"], kafka_clusters["us-east"]
    topic = unique_topic("paused-lag")
    create_topic(west, topic, partitions=2)
    produce_known(west, topic, 2, 200)
    source, target = clusters(kafka_clusters)
    flow = Flow.objects.create(source=source, target=target, topics=[topic], paused=True)
    TaskAssignment.objects.create(flow=flow, task_id=0, partitions=[[topic, 0], [topic, 1]], state=TaskState.PAUSED)
    store_positions(east, "us-west", {(topic, 0): 100, (topic, 1): 100})  # replicated everything, then paused

    observe_flow(flow, timezone.now())
    assert figures(api) == (0, 0, 0.0)

    produce_known(west, topic, 2, 500, start=200)  # 250 more on each partition while the flow is paused
    observe_flow(flow, timezone.now())
    assert figures(api) == (500, 500, 500.0)
    assert stopped_lag(flow).tasks == [0]
