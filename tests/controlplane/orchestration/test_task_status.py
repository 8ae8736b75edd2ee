"""What a task reports is declared (TaskReport over the data plane's snapshot types) and written only when it changed,
and the flow status the API serves from it, with a page of partitions, has exactly the fields its serializer
describes."""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module

import pytest
from django.apps import apps
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from controlplane.orchestration.api.serializers import FlowStatusSerializer
from controlplane.orchestration.models import FlowPlan, PartitionReport, TaskAssignment
from controlplane.orchestration.services import leases, status, taskreports
from controlplane.orchestration.services.taskreports import Reporter
from controlplane.orchestration.taskstatus import FlowStatus, TaskReport, TaskTotals, compact, expand
from replication.metrics.registry import MetricsRegistry, PartitionSnapshot, TaskSnapshot
from tests.controlplane.orchestration.factories import flow, live_worker, store_report
from tests.support.documented import assert_describes, assert_documented

split_statuses = import_module("controlplane.orchestration.migrations.0006_partition_reports").split_statuses

CLUSTERS = {"a": "127.0.0.1:1", "b": "127.0.0.1:2"}


def registry() -> MetricsRegistry:
    """A task that replicated 42 records of t-0 and reports a lasting fault."""
    metrics = MetricsRegistry()
    metrics.set_task_state("a->b", 0, "RUNNING")
    metrics.record_batch("a->b", "t", 0, 42, 4200, 12.0, 3.0)
    metrics.set_lag("a->b", "t", 0, 7)
    metrics.set_position("a->b", "t", 0, 1500)
    metrics.report_fault("a->b", 0, "target has not acknowledged for 30s")
    return metrics


def test_every_field_of_the_flow_status_is_described_in_the_api() -> None:
    assert_describes(FlowStatus, FlowStatusSerializer())


def test_a_task_report_has_exactly_the_declared_keys_and_a_partition_survives_its_compact_form() -> None:
    metrics = registry().snapshot()["flows"]["a->b"]
    written = Reporter(1, 1, "a->b", 0).assignment_fields(metrics, [["t", 0]])["status"]
    assert set(written) == TaskReport.__required_keys__
    assert set(written["metrics"]) == TaskSnapshot.__required_keys__
    assert set(written["totals"]) == TaskTotals.__required_keys__
    assert written["totals"] == {
        "partitions": 1,
        "records": 42,
        "bytes": 4200,
        "lag": 7,
        "latency_p99_ms": 12.0,
        "lost_records": 0,
    }
    snapshot = metrics["partitions"]["t-0"]
    assert expand("t", 0, compact(snapshot)) == snapshot
    assert set(expand("t", 0, compact(snapshot))) == PartitionSnapshot.__required_keys__


@pytest.mark.django_db
def test_the_status_api_serves_a_reported_task_and_an_idle_one_with_every_field_described(
    api: Callable[[str | None], APIClient],
) -> None:
    obj = flow(CLUSTERS, "a", "b", "t", tasks_max=2)
    running = TaskAssignment.objects.create(flow=obj, task_id=0, partitions=[["t", 0]])
    TaskAssignment.objects.create(flow=obj, task_id=1, partitions=[])
    lease = leases.acquire(running.pk, live_worker("w1", slots=4))
    assert lease is not None
    store_report(running, registry(), "a->b")

    body = api("viewer").get(f"/api/v1/flows/{obj.pk}/status/").json()
    assert_documented(body, FlowStatusSerializer())
    reported, idle = body["tasks"]
    assert (reported["placement"], reported["worker"], reported["fault"]) == (
        "running",
        "w1",
        "target has not acknowledged for 30s",
    )
    assert (reported["partition_count"], reported["records"], reported["lag"]) == (1, 42, 7)
    (partition,) = body["partitions"]["results"]
    figures = (partition["topic"], partition["task_id"], partition["position"], partition["lag"])
    assert figures == ("t", 0, 1500, 7) and partition["record_count"] == 42
    assert partition["latency_p99_ms"] is not None and reported["mismatch"] == {
        "missing": [],
        "unexpected": [],
        "missing_count": 0,
        "unexpected_count": 0,
    }
    assert (idle["placement"], idle["partition_count"], idle["fault"]) == ("idle", 0, None)


@pytest.mark.django_db
def test_the_status_api_pages_filters_and_sorts_partitions(api: Callable[[str | None], APIClient]) -> None:
    obj = flow(CLUSTERS, "a", "b", "t", tasks_max=2)
    metrics = [MetricsRegistry(), MetricsRegistry()]
    for n in range(250):
        topic = "orders" if n < 200 else "payments"
        metrics[n % 2].set_lag("a->b", topic, n, n)
    for task_id in (0, 1):
        assignment = TaskAssignment.objects.create(flow=obj, task_id=task_id)
        store_report(assignment, metrics[task_id], "a->b")
    client = api("viewer")

    first = client.get(f"/api/v1/flows/{obj.pk}/status/").json()
    assert [t["lag"] for t in first["tasks"]] == [sum(range(0, 250, 2)), sum(range(1, 250, 2))]
    page = first["partitions"]
    assert (page["count"], page["offset"], page["limit"], len(page["results"])) == (250, 0, 100, 100)
    assert [(p["topic"], p["partition"]) for p in page["results"][:2]] == [("orders", 0), ("orders", 1)]
    third = client.get(f"/api/v1/flows/{obj.pk}/status/?offset=200&limit=100").json()["partitions"]
    assert [p["partition"] for p in third["results"]] == list(range(200, 250))
    worst = client.get(f"/api/v1/flows/{obj.pk}/status/?order=-lag&limit=3&topic=ORD").json()["partitions"]
    assert worst["count"] == 200 and [p["lag"] for p in worst["results"]] == [199, 198, 197]
    assert [p["task_id"] for p in worst["results"]] == [1, 0, 1]
    bad = client.get(f"/api/v1/flows/{obj.pk}/status/?limit=5000&order=lag")
    assert bad.status_code == 400 and set(bad.json()) == {"limit", "order"}
    past_bigint = client.get(f"/api/v1/flows/{obj.pk}/status/?offset=142381867652888985600")  # found by schemathesis
    assert past_bigint.status_code == 400 and set(past_bigint.json()) == {"offset"}


@pytest.mark.django_db
def test_a_report_writes_only_the_partitions_that_changed() -> None:
    obj = flow(CLUSTERS, "a", "b", "t")
    assignment = TaskAssignment.objects.create(flow=obj, task_id=0)
    metrics = MetricsRegistry()
    for n in range(300):
        metrics.set_lag("a->b", "t", n, 0)
    reporter = store_report(assignment, metrics, "a->b")
    assert PartitionReport.objects.filter(flow=obj).count() == 300
    snapshot = metrics.snapshot()["flows"]["a->b"]
    assert reporter.write_partitions(snapshot) == 0, "nothing changed: nothing written"
    assert reporter.assignment_fields(snapshot, [["t", n] for n in range(300)]) == {}
    metrics.set_lag("a->b", "t", 7, 5)
    assert reporter.write_partitions(metrics.snapshot()["flows"]["a->b"]) == 1
    assert PartitionReport.objects.get(flow=obj, partition=7).lag == 5


@pytest.mark.django_db
def test_a_report_of_idle_partitions_compacts_none_of_them_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """An idle task of 2,500 partitions reports every 5 s: a partition whose snapshot did not change is neither
    rebuilt by the registry nor compacted again; one that changed is, and is written."""
    obj = flow(CLUSTERS, "a", "b", "t")
    assignment = TaskAssignment.objects.create(flow=obj, task_id=0)
    metrics = MetricsRegistry()
    for n in range(300):
        metrics.set_position("a->b", "t", n, 10)
        metrics.set_lag("a->b", "t", n, 0)
    reporter = store_report(assignment, metrics, "a->b")
    compacted: list[object] = []
    monkeypatch.setattr(taskreports, "compact", lambda snapshot: compacted.append(snapshot) or compact(snapshot))
    assert reporter.write_partitions(metrics.snapshot()["flows"]["a->b"]) == 0
    assert compacted == []
    metrics.set_lag("a->b", "t", 7, 5)
    assert reporter.write_partitions(metrics.snapshot()["flows"]["a->b"]) == 1
    assert len(compacted) == 1 and PartitionReport.objects.get(flow=obj, partition=7).lag == 5


@pytest.mark.django_db
def test_a_flows_status_reads_no_listed_source_partitions() -> None:
    """The sampler (5 s), the alerts (10 s) and the observer (15 s) read every flow's status: at 10,000 partitions
    decoding the controller's listing was most of their database time."""
    obj = flow(CLUSTERS, "a", "b", "t")
    FlowPlan.objects.create(flow=obj, partitions=[["t", n] for n in range(100)], last_error="listing: timed out")
    with CaptureQueriesContext(connection) as queries:
        many = status.flow_statuses([obj])[obj.pk]
        one = status.flow_status(obj)
    assert many.controller_error == one.controller_error == "listing: timed out"
    columns = [q["sql"].split(" FROM ")[0] for q in queries.captured_queries if q["sql"].startswith("SELECT")]
    assert not [sql for sql in columns if '"orchestration_flowplan"."partitions"' in sql]


@pytest.mark.django_db
def test_a_status_stored_by_an_older_version_is_split_by_the_migration(
    api: Callable[[str | None], APIClient],
) -> None:
    # Statuses written before migration 0006 held every partition's snapshot, some of them before the resume
    # metrics and the warning existed (found on a restarted `make demo`: a paused flow keeps its status).
    obj = flow(CLUSTERS, "a", "b", "t")
    old = {"flow": "a->b", "task": 0, "metrics": registry().snapshot()["flows"]["a->b"], "positions": {}}
    for task in old["metrics"]["tasks"].values():
        del task["warning"]
    for partition in old["metrics"]["partitions"].values():
        for key in ("resume-skipped-count", "resume-mismatch-count", "last-resume-mismatch"):
            del partition[key]
    TaskAssignment.objects.create(flow=obj, task_id=0, partitions=[["t", 0]], status=old)
    split_statuses(apps, None)
    response = api("viewer").get(f"/api/v1/flows/{obj.pk}/status/")
    assert response.status_code == 200, response.content
    body = response.json()
    (partition,) = body["partitions"]["results"]
    assert (partition["record_count"], partition["resume_skipped"], partition["last_resume_mismatch"]) == (42, 0, None)
    assert (body["tasks"][0]["warning"], body["tasks"][0]["records"], body["tasks"][0]["lag"]) == (None, 42, 7)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("reported", "missing", "unexpected"),
    [
        ([["t", 0], ["t", 1], ["u", 0]], [], []),  # in sync: the database compares, no list is loaded
        ([["t", 0], ["u", 0], ["v", 3]], [["t", 1]], [["v", 3]]),
        ([], [["t", 0], ["t", 1], ["u", 0]], []),  # started, nothing reported yet
    ],
)
def test_the_status_compares_desired_and_reported_partitions_of_a_running_task(
    reported: list[list[str | int]], missing: list[list[str | int]], unexpected: list[list[str | int]]
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from controlplane.orchestration.services.status import flow_status

    obj = flow(CLUSTERS, "a", "b", "t")
    assignment = TaskAssignment.objects.create(flow=obj, task_id=0, partitions=[["t", 0], ["t", 1], ["u", 0]])
    lease = leases.acquire(assignment.pk, live_worker("w", 1))
    assert lease is not None and leases.renew(lease, reported_partitions=reported)
    with CaptureQueriesContext(connection) as queries:
        (task,) = flow_status(obj).tasks
    assert task.mismatch is not None and (task.mismatch.missing, task.mismatch.unexpected) == (missing, unexpected)
    assert (task.mismatch.missing_count, task.mismatch.unexpected_count) == (len(missing), len(unexpected))
    assert (task.desired_count, task.reported_count, task.live) == (3, len(reported), True)
    # The lists are loaded (refresh_from_db: by the row's id) only when they differ.
    loaded = [q["sql"] for q in queries.captured_queries if '"orchestration_taskassignment"."id" =' in q["sql"]]
    assert len(loaded) == (0 if not missing and not unexpected else 1), loaded


@pytest.mark.django_db
def test_a_task_that_is_not_running_misses_every_desired_partition() -> None:
    from controlplane.orchestration.services.status import flow_status

    obj = flow(CLUSTERS, "a", "b", "t")
    TaskAssignment.objects.create(flow=obj, task_id=0, partitions=[["t", 0]], reported_partitions=[["t", 0]])
    (task,) = flow_status(obj).tasks
    assert task.mismatch is not None and (task.mismatch.missing, task.mismatch.missing_count) == ([["t", 0]], 1)
