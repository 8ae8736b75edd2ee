"""The observer's rows of the partitions no live task holds: written with the stored position and lag, keeping the
counters a task reported, and never over a row a live task reports (whose lag that task's report counts already)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from controlplane.monitoring.services.stopped import PartitionLag, StoppedLag, write_reports
from controlplane.orchestration.choices import TaskState
from controlplane.orchestration.models import PartitionReport, TaskAssignment
from controlplane.orchestration.services.taskreports import Reporter
from controlplane.orchestration.taskstatus import expand
from replication.metrics.registry import MetricsRegistry

pytestmark = pytest.mark.django_db


def test_rows_take_the_observed_position_and_lag_except_where_a_live_task_still_reports_the_partition() -> None:
    west = Cluster.objects.create(alias="us-west", bootstrap_servers="127.0.0.1:1")
    east = Cluster.objects.create(alias="us-east", bootstrap_servers="127.0.0.1:2")
    flow = Flow.objects.create(source=west, target=east, topics=["orders"], tasks_max=2)
    live = TaskAssignment.objects.create(
        flow=flow, task_id=0, state=TaskState.RUNNING, lease_expires_at=timezone.now() + timedelta(hours=1)
    )
    stopped = TaskAssignment.objects.create(flow=flow, task_id=1, state=TaskState.FAILED)
    metrics = MetricsRegistry()
    metrics.record_batch(flow.name, "orders", 1, 70, 7000, 5.0, 5.0)
    metrics.set_position(flow.name, "orders", 1, 70)  # partition 1, moving to task 1: task 0 still reports it
    metrics.set_lag(flow.name, "orders", 1, 10)
    Reporter(flow.pk, live.pk, flow.name, 0).write_partitions(metrics.snapshot()["flows"][flow.name])
    metrics = MetricsRegistry()
    metrics.record_batch(flow.name, "orders", 2, 50, 5000, 5.0, 5.0)
    metrics.set_position(flow.name, "orders", 2, 50)  # partition 2: task 1 ran it, and stopped
    Reporter(flow.pk, stopped.pk, flow.name, 1).write_partitions(metrics.snapshot()["flows"][flow.name])
    observed = StoppedLag(
        lag=25 + 30 + 500,
        tasks=[1],
        partitions={
            ("orders", 1): PartitionLag(stopped.pk, 60, 25),
            ("orders", 2): PartitionLag(stopped.pk, 45, 30),  # stored a little behind the last report
            ("orders", 3): PartitionLag(stopped.pk, None, 500),  # never replicated
        },
    )

    assert write_reports(flow, observed, timezone.now()) == 25  # partition 1's lag is in task 0's own report

    rows = {
        r.partition: (r.assignment_id, r.position, r.lag, expand(r.topic, r.partition, r.snapshot)["record-count"])
        for r in PartitionReport.objects.filter(flow=flow)
    }
    assert rows == {1: (live.pk, 70, 10, 70), 2: (stopped.pk, 45, 30, 50), 3: (stopped.pk, None, 500, 0)}
