"""The dashboard's rates with the tasks' reports written as running tasks write them (a MetricsRegistry per task,
through the Reporter), the sampler ticking every 5 s: records/s entering replication (once per record, on the flow
out of its origin cluster) and copied (every hop), and neither read high when partitions move between tasks or
tasks restart."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from controlplane.monitoring.services import graph, sampling
from controlplane.orchestration.choices import TaskState
from controlplane.orchestration.models import TaskAssignment
from controlplane.orchestration.services.taskreports import Reporter
from replication.metrics.registry import MetricsRegistry

pytestmark = pytest.mark.django_db
TICK = 5  # seconds between sampler ticks and task reports


@dataclass
class Task:
    """One running task: its registry counts from 0 when it starts, as a task's metrics do."""

    flow: Flow
    task_id: int
    registry: MetricsRegistry = field(default_factory=MetricsRegistry)
    reporter: Reporter | None = None

    def start(self) -> None:
        assignment, _ = TaskAssignment.objects.update_or_create(
            flow=self.flow,
            task_id=self.task_id,
            defaults={"state": TaskState.RUNNING, "lease_expires_at": timezone.now() + timedelta(hours=1)},
        )
        self.registry = MetricsRegistry()
        self.reporter = Reporter(self.flow.pk, assignment.pk, self.flow.name, self.task_id)

    def copy(self, topic: str, partition: int, position: int, count: int) -> None:
        self.registry.record_batch(self.flow.name, topic, partition, count, 100 * count, 5.0, 5.0)
        self.registry.set_position(self.flow.name, topic, partition, position)
        self.registry.set_lag(self.flow.name, topic, partition, 0)

    def report(self) -> None:
        assert self.reporter is not None
        snapshot = self.registry.snapshot()["flows"].get(self.flow.name)
        if snapshot is None:
            return
        held = sorted([p["topic"], p["partition"]] for p in snapshot["partitions"].values())
        fields = self.reporter.assignment_fields(snapshot, held)
        TaskAssignment.objects.filter(flow=self.flow, task_id=self.task_id).update(**fields)
        self.reporter.write_partitions(snapshot)


def make_flow(source: str, target: str, topics: list[str]) -> Flow:
    clusters = [
        Cluster.objects.get_or_create(alias=a, defaults={"bootstrap_servers": f"{a}:9092"})[0] for a in (source, target)
    ]
    return Flow.objects.create(source=clusters[0], target=clusters[1], topics=topics)


def tick(at: datetime) -> dict[str, object]:
    sampling.sample_flows(at)
    return graph.dashboard(at)


def test_a_stream_through_two_hops_enters_once_and_is_copied_twice() -> None:
    """40 records/s produced on us-west's orders, copied to us-east (orders) and on to backup (us-west.orders);
    each flow copies the heartbeats too, which are replication's own records, not traffic."""
    first = Task(make_flow("us-west", "us-east", ["orders"]), 0)
    second = Task(make_flow("us-east", "backup", ["us-west.orders"]), 0)
    first.start()
    second.start()
    start = timezone.now() - timedelta(minutes=10)
    rate, position = 40, 0
    for step in range(1, 25):
        position += rate * TICK
        first.copy("orders", 0, position, rate * TICK)
        first.copy("heartbeats", 0, step, 1)
        second.copy("us-west.orders", 0, position - rate, rate * TICK)  # a second behind the first hop
        second.copy("us-east.heartbeats", 0, step, 1)
        first.report()
        second.report()
        body = tick(start + timedelta(seconds=TICK * step))
    tiles = body["tiles"]
    assert (tiles["entering_per_second"], tiles["copied_per_second"]) == (40.0, 80.0)
    assert tiles["entering_by_origin"] == [
        {"cluster": "us-east", "records_per_second": 0.0},
        {"cluster": "us-west", "records_per_second": 40.0},
    ]
    edges = {e["name"]: (e["records_per_second"], e["entering_per_second"]) for e in body["edges"]}
    assert edges == {"us-west->us-east": (40.0, 40.0), "us-east->backup": (40.0, 0.0)}


def test_a_partition_moving_to_another_task_or_tasks_restarting_never_reads_high() -> None:
    """Two partitions at 20 records/s each. At 60 s partition 1 moves to task 1, whose counters start at 0, while
    task 0 keeps reporting it for one more report; at 120 s both tasks restart (a resume), at different ticks. The
    sum of per-task record counters dropped at each of these, and a drop read as a restart counted the whole sum
    (the other task's count included) as growth: the demo read twice its rate for a minute."""
    flow = make_flow("us-west", "us-east", ["orders"])
    tasks = [Task(flow, 0), Task(flow, 1)]
    tasks[0].start()
    start = timezone.now() - timedelta(minutes=10)
    per_partition = 20
    positions = [0, 0]
    holder = {0: tasks[0], 1: tasks[0]}
    readings = []
    for step in range(1, 50):
        seconds = TICK * step
        if seconds == 60:  # the move: task 1 takes partition 1 at its position
            tasks[1].start()
            holder[1] = tasks[1]
        if seconds == 65:  # task 0's next report no longer holds it
            tasks[0].registry._flows[flow.name].partitions.pop(("orders", 1))
        if seconds in (120, 125):  # each task restarts with its counters at 0
            tasks[seconds == 125].start()
        for partition in (0, 1):
            positions[partition] += per_partition * TICK
            holder[partition].copy("orders", partition, positions[partition], per_partition * TICK)
        for task in tasks:
            if task.reporter is not None:
                task.report()
        body = tick(start + timedelta(seconds=seconds))
        if seconds >= 30:
            readings.append(body["edges"][0]["records_per_second"])
    assert max(readings) <= 1.1 * 40 and min(readings) >= 0.9 * 40, readings
