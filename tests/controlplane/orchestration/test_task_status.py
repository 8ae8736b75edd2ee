"""What a task reports is declared (TaskReport over the data plane's snapshot types), and the flow status the API
serves from it has exactly the fields its serializer describes, every one of them."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace

import pytest
from rest_framework.test import APIClient

from controlplane.orchestration.api.serializers import FlowStatusSerializer
from controlplane.orchestration.models import TaskAssignment
from controlplane.orchestration.services import leases, runner
from controlplane.orchestration.taskstatus import FlowStatus, TaskReport
from replication.metrics import FlowSnapshot, MetricsRegistry, PartitionSnapshot, TaskSnapshot
from tests.controlplane.orchestration.factories import flow, live_worker
from tests.support.documented import assert_describes, assert_documented

CLUSTERS = {"a": "127.0.0.1:1", "b": "127.0.0.1:2"}


def report() -> TaskReport:
    """What the runner writes for a task that replicated 42 records of t-0 and reports a lasting fault."""
    registry = MetricsRegistry()
    registry.set_task_state("a->b", 0, "RUNNING")
    registry.record_batch("a->b", "t", 0, 42, 4200, 12.0, 3.0)
    registry.set_lag("a->b", "t", 0, 7)
    registry.set_position("a->b", "t", 0, 1500)
    registry.report_fault("a->b", 0, "target has not acknowledged for 30s")
    task = SimpleNamespace(flow=SimpleNamespace(name="a->b"), task_id=0, stats={"t-0": (1500, 1400, 1507)})
    return runner._status(registry, task)  # type: ignore[arg-type]


def test_every_field_of_the_flow_status_is_described_in_the_api() -> None:
    assert_describes(FlowStatus, FlowStatusSerializer())


def test_a_task_report_has_exactly_the_declared_keys_at_every_level() -> None:
    written = report()
    assert set(written) == TaskReport.__required_keys__
    assert set(written["metrics"]) == FlowSnapshot.__required_keys__
    assert set(written["metrics"]["tasks"]["0"]) == TaskSnapshot.__required_keys__
    assert set(written["metrics"]["partitions"]["t-0"]) == PartitionSnapshot.__required_keys__


@pytest.mark.django_db
def test_the_status_api_serves_a_reported_task_and_an_idle_one_with_every_field_described(
    api: Callable[[str | None], APIClient],
) -> None:
    obj = flow(CLUSTERS, "a", "b", "t", tasks_max=2)
    running = TaskAssignment.objects.create(flow=obj, task_id=0, partitions=[["t", 0]], reported_partitions=[["t", 0]])
    TaskAssignment.objects.create(flow=obj, task_id=1, partitions=[])
    lease = leases.acquire(running.pk, live_worker("w1", slots=4))
    assert lease is not None and leases.renew(lease, status=report())

    body = api("viewer").get(f"/api/v1/flows/{obj.pk}/status/").json()
    assert_documented(body, FlowStatusSerializer())
    reported, idle = body["tasks"]
    assert (reported["placement"], reported["worker"], reported["fault"]) == (
        "running",
        "w1",
        "target has not acknowledged for 30s",
    )
    (partition,) = reported["partitions"]
    figures = (partition["topic"], partition["position"], partition["lag"], partition["record_count"])
    assert figures == ("t", 1500, 7, 42)
    assert partition["latency_p99_ms"] is not None and reported["mismatch"] == {"missing": [], "unexpected": []}
    assert (idle["placement"], idle["partitions"], idle["fault"]) == ("idle", [], None)


@pytest.mark.django_db
def test_a_status_stored_by_an_older_version_is_still_served(api: Callable[[str | None], APIClient]) -> None:
    # Found on a restarted `make demo`: statuses written before the resume metrics (and the warning) existed made
    # the status API and the sampler raise KeyError until every task had reported again; a paused flow never does.
    obj = flow(CLUSTERS, "a", "b", "t")
    old = report()
    for task in old["metrics"]["tasks"].values():
        del task["warning"]  # type: ignore[misc]
    for partition in old["metrics"]["partitions"].values():
        for key in ("resume-skipped-count", "resume-mismatch-count", "last-resume-mismatch"):
            del partition[key]  # type: ignore[misc]
    TaskAssignment.objects.create(flow=obj, task_id=0, partitions=[["t", 0]], status=old)
    response = api("viewer").get(f"/api/v1/flows/{obj.pk}/status/")
    assert response.status_code == 200, response.content
    (partition,) = response.json()["tasks"][0]["partitions"]
    assert (partition["record_count"], partition["resume_skipped"], partition["last_resume_mismatch"]) == (42, 0, None)
    assert response.json()["tasks"][0]["warning"] is None
