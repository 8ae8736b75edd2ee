"""The observer's lag of a stopped flow on real brokers: source end offsets minus what its tasks last reported,
the reports written the way a running task writes them (a MetricsRegistry snapshot through the Reporter)."""

from __future__ import annotations

import pytest

from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from controlplane.monitoring.services.observe import stopped_lag
from controlplane.orchestration.models import TaskAssignment
from controlplane.orchestration.services.reports import Reporter
from replication.metrics.registry import MetricsRegistry
from tests.support.kafka import create_topic, unique_topic
from tests.support.replication import produce_known

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


def test_a_stopped_flow_lags_by_every_record_written_after_its_last_report(kafka_clusters: dict[str, str]) -> None:
    west = kafka_clusters["us-west"]
    topic = unique_topic("stopped-lag")
    create_topic(west, topic, partitions=2)
    produce_known(west, topic, 1, 10)  # partition 0 only: the task replicated these ten; partition 1 was empty
    source = Cluster.objects.create(alias="us-west", bootstrap_servers=west)
    target = Cluster.objects.create(alias="us-east", bootstrap_servers=kafka_clusters["us-east"])
    flow = Flow.objects.create(source=source, target=target, topics=[topic])
    assignment = TaskAssignment.objects.create(flow=flow, task_id=0, partitions=[[topic, 0], [topic, 1]])
    metrics = MetricsRegistry()
    # What the task's last report held: partition 0 replicated up to offset 10, partition 1 assigned but empty
    # (its lag is known, its position never set: nothing was replicated there).
    metrics.set_lag(flow.name, topic, 0, 0)
    metrics.set_position(flow.name, topic, 0, 10)
    metrics.set_lag(flow.name, topic, 1, 0)
    Reporter(flow.pk, assignment.pk, flow.name, 0).write_partitions(metrics.snapshot()["flows"][flow.name])
    assert stopped_lag(flow) == 0

    produce_known(west, topic, 2, 30, start=10)  # the flow is stopped: 15 more records on each partition
    assert stopped_lag(flow) == 30
