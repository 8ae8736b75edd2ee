"""The controller's tick stays cheap at scale: it never loads the tasks' status documents (hundreds of KB each)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from controlplane.orchestration.models import FlowPlan, TaskAssignment
from controlplane.orchestration.services import controller
from tests.controlplane.orchestration.factories import flow, live_worker

CLUSTERS = {"a": "127.0.0.1:1", "b": "127.0.0.1:2"}


@pytest.mark.django_db
@pytest.mark.parametrize("paused", [False, True])
def test_a_tick_reads_no_task_status(monkeypatch: Any, paused: bool) -> None:
    live_worker("w1", slots=1)
    obj = flow(CLUSTERS, "a", "b", "t", tasks_max=2)
    obj.paused = paused
    obj.save()
    FlowPlan.objects.create(flow=obj, provisioned_at=timezone.now())
    big = {"partitions": [{"topic": "t", "partition": n, "lag": n} for n in range(2000)]}
    for task_id in range(2):
        TaskAssignment.objects.create(flow=obj, task_id=task_id, partitions=[["t", task_id]], status=big)
    monkeypatch.setattr(controller, "_source_partitions", lambda flow, plan_row: [("t", 0), ("t", 1)])
    with CaptureQueriesContext(connection) as queries:
        controller.tick()
    reads = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("SELECT")]
    task_reads = [sql for sql in reads if '"orchestration_taskassignment"' in sql.split(" FROM ")[-1]]
    assert task_reads, "the tick reads the assignments"
    assert not [sql for sql in task_reads if '"orchestration_taskassignment"."status"' in sql]
    if not paused:
        assert TaskAssignment.objects.exclude(dispatched_at=None).count() == 1  # one slot: one task dispatched
