"""Alert tests: a flow whose task status the test sets (instead of a running task), and no default rules."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from controlplane.alerts.models import AlertRule
from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from controlplane.orchestration.taskstatus import FlowStatus, TaskStatus


@pytest.fixture
def flow(db: None) -> Flow:
    AlertRule.objects.all().delete()  # the migration's global defaults: each test states its own rules
    source = Cluster.objects.create(alias="us-west", bootstrap_servers="127.0.0.1:1")
    target = Cluster.objects.create(alias="us-east", bootstrap_servers="127.0.0.1:2")
    return Flow.objects.create(source=source, target=target)


def running(lag: int | None, **task: Any) -> TaskStatus:
    values = {"task_id": 0, "state": "RUNNING", "live": True, "desired_count": 1, "partition_count": 1, "lag": lag}
    return TaskStatus(**(values | task))


@pytest.fixture
def set_status(monkeypatch: pytest.MonkeyPatch, flow: Flow) -> Callable[..., None]:
    """set_status(task, ..., paused=False): what the orchestration reports of the flow from now on."""
    current: dict[str, FlowStatus] = {}

    def put(*tasks: TaskStatus, **fields: Any) -> None:
        current["status"] = replace(FlowStatus(flow=flow.pk, name=flow.name, tasks=tasks), **fields)

    monkeypatch.setattr(
        "controlplane.alerts.services.figures.flow_statuses", lambda flows: {f.pk: current["status"] for f in flows}
    )
    put()
    return put
