"""The observer's lag of a stopped flow on real brokers: source end offsets minus the positions the flow stored (what
its task resumes from), not what the task last reported, which can be ahead of them."""

from __future__ import annotations

import pytest

from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from controlplane.monitoring.services.stopped import stopped_lag
from controlplane.orchestration.models import TaskAssignment
from controlplane.orchestration.services.taskreports import Reporter
from replication.metrics.registry import MetricsRegistry
from tests.controlplane.monitoring.test_every_partition_counted import store_positions
from tests.support.kafka import create_topic, unique_topic
from tests.support.replication import produce_known

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


def test_a_stopped_flow_lags_by_every_record_written_after_its_stored_positions(kafka_clusters: dict[str, str]) -> None:
    west = kafka_clusters["us-west"]
    topic = unique_topic("stopped-lag")
    create_topic(west, topic, partitions=2)
    produce_known(west, topic, 1, 10)  # partition 0 only: the task replicated these ten; partition 1 was empty
    source = Cluster.objects.create(alias="us-west", bootstrap_servers=west)
    target = Cluster.objects.create(alias="us-east", bootstrap_servers=kafka_clusters["us-east"])
    flow = Flow.objects.create(source=source, target=target, topics=[topic])
    assignment = TaskAssignment.objects.create(flow=flow, task_id=0, partitions=[[topic, 0], [topic, 1]])
    metrics = MetricsRegistry()
    # The task's last report was ahead of what it stored: partition 0 reported at 10, stored at 8 (it resumes there,
    # so two records are lag); partition 1 was empty, nothing stored (it starts at the source log start).
    metrics.set_lag(flow.name, topic, 0, 0)
    metrics.set_position(flow.name, topic, 0, 10)
    metrics.set_lag(flow.name, topic, 1, 0)
    Reporter(flow.pk, assignment.pk, flow.name, 0).write_partitions(metrics.snapshot()["flows"][flow.name])
    store_positions(kafka_clusters["us-east"], "us-west", {(topic, 0): 8})
    assert stopped_lag(flow).lag == 2

    produce_known(west, topic, 2, 30, start=10)  # the flow is stopped: 15 more records on each partition
    assert stopped_lag(flow).lag == 32
