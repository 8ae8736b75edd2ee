"""The UI's own logic without Kafka: health from task status, throughput from samples, reports, the API's roles."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from controlplane.monitoring.choices import Health
from controlplane.monitoring.services.health import health, totals
from controlplane.monitoring.services.sampling import Point, Rates, sample_rates
from controlplane.orchestration.taskstatus import FlowStatus, TaskStatus
from controlplane.reports.choices import ReportStatus
from controlplane.reports.models import Report
from controlplane.ui.services import flowreports, preview
from controlplane.ui.staticfinders import PLOTLY_PATH, PlotlyFinder

ALIASES = ("us-west", "us-east", "backup")


def status(*tasks: TaskStatus, **flow: Any) -> FlowStatus:
    return FlowStatus(flow=1, name="us-west->us-east", tasks=tasks, **flow)


def task(state: str = "RUNNING", live: bool = True, lag: int = 0, **extra: Any) -> TaskStatus:
    totals = {"partition_count": 1, "lag": lag, "latency_p99_ms": 40.0, "records": 10}
    return TaskStatus(**{"task_id": 0, "state": state, "live": live, **totals, **extra})


@pytest.mark.parametrize(
    ("flow_status", "expected"),
    [
        (status(task()), Health.HEALTHY),
        (status(task(lag=50_000)), Health.LAGGING),
        (status(), Health.STARTING),
        (status(task(state="PENDING", live=False)), Health.STARTING),
        # An idle task (no partitions, not task 0) is never started and does not hold the flow back...
        (status(task(), task(state="PENDING", live=False, task_id=1, desired_count=0)), Health.HEALTHY),
        # ... but a task with partitions must run, and so must task 0, which emits heartbeats and checkpoints.
        (status(task(), task(state="PENDING", live=False, task_id=1, desired_count=1)), Health.STARTING),
        (status(task(state="PENDING", live=False, desired_count=0)), Health.STARTING),
        (status(task(state="FAILED", last_error="DataLossError: gone")), Health.FAILING),
        (status(task(fault="target has not acknowledged for 30s")), Health.FAILING),
        (status(task(), paused=True), Health.PAUSED),
        (status(task(), enabled=False), Health.DISABLED),
    ],
)
def test_a_flow_is_coloured_by_the_state_of_its_tasks(flow_status: FlowStatus, expected: Health) -> None:
    assert health(flow_status) == expected


def test_totals_sum_lag_and_take_the_worst_p99() -> None:
    two = status(task(lag=5), task(lag=7, latency_p99_ms=90.0, records=3))
    result = totals(two)
    assert (result.lag, result.latency_p99_ms, result.records) == (12, 90.0, 13)


def test_throughput_is_the_growth_of_positions_per_second_and_entering_counts_the_sources_own_topics() -> None:
    now = timezone.now()
    previous = [Point(now - timedelta(seconds=5), 1000, 400, 3)]
    assert sample_rates(previous, Point(now, 1500, 600, 3)) == Rates(100.0, 40.0)
    assert sample_rates(previous, Point(now, 1200, 400, 2)) is None  # a partition went: that step is not growth
    assert sample_rates([], Point(now, 1500, 600, 3)) is None  # no earlier sample in the window: no data, not 0


def _finished(job: str, summary: dict[str, Any], minutes_ago: int = 0, status: str = ReportStatus.SUCCEEDED) -> Report:
    return Report.objects.create(
        job=job, status=status, finished_at=timezone.now() - timedelta(minutes=minutes_ago), summary=summary
    )


@pytest.mark.django_db
def test_reports_show_the_newest_finished_run_per_job_and_only_rows_about_the_flow() -> None:
    for minutes_ago, flows in ((10, ["a->b"]), (5, ["a->b", "c->d"])):
        rows = [{"flow": f, "p99_ms": minutes_ago} for f in flows]
        _finished("latency", {"flows": rows, "dead_links": ["a->b"]}, minutes_ago)
    Report.objects.create(job="latency", status=ReportStatus.FAILED, finished_at=timezone.now(), summary={})
    Report.objects.create(job="audit", status=ReportStatus.RUNNING)  # not finished: nothing to show
    found = flowreports.latest_for_flow("a->b")
    assert [r["job"] for r in found] == ["latency"]
    assert found[0]["rows"] == [{"section": "flows", "flow": "a->b", "p99_ms": 5}]
    assert found[0]["flagged_in"] == ["dead_links"]


@pytest.mark.django_db
def test_a_reports_columns_are_where_then_figures_by_name_whatever_order_the_database_kept() -> None:
    # Postgres's jsonb order: shortest key first.
    row = {"flow": "a->b", "facts": 3, "topic": "t", "missing": 7, "partition": 3, "window_start": "w"}
    row |= {"replication_latency_ms_max": 9, "replication_latency_ms_p50": 1}
    _finished("audit", {"loss": [row], "flows": [{"flow": "a->b", "facts": 3}]})
    (found,) = flowreports.latest_for_flow("a->b")
    assert [r["section"] for r in found["rows"]] == ["flows", "loss"]
    assert list(found["rows"][1]) == [
        "section",
        "topic",
        "partition",
        "window_start",
        "facts",
        "flow",
        "missing",
        "replication_latency_ms_p50",
        "replication_latency_ms_max",
    ]


@pytest.mark.django_db
def test_a_run_over_an_empty_window_says_no_data_and_no_run_is_an_empty_list() -> None:
    assert flowreports.latest_for_flow("a->b") == []
    report = _finished("audit", {"source_records": 0}, status=ReportStatus.NO_DATA)
    (found,) = flowreports.latest_for_flow("a->b")
    assert found["no_data"] is True and found["figures"] == {"source_records": 0}
    assert found["written_at"] == report.finished_at.isoformat()


@pytest.mark.django_db
def test_a_reports_series_about_the_flow_are_charted_not_tabled_and_the_topology_is_a_whole_graph() -> None:
    series = [
        {"flow": f, "at": f"2027-01-15T08:0{m}:00Z", "replication_latency_ms_p99": m}
        for f in ("a->b", "c->d")
        for m in range(3)
    ]
    links = [
        {"flow": "a->b", "source": "a", "target": "b", "dead": True},
        {"flow": "c->d", "source": "c", "target": "d", "dead": False},
    ]
    _finished("latency", {"series": series})
    _finished("topology", {"nodes": ["a", "b", "c", "d"], "links": links})
    latency, topology = flowreports.latest_for_flow("a->b")
    assert latency["series"] == series[:3] and latency["rows"] == [] and latency["graph"] is None
    assert topology["graph"] == {"nodes": ["a", "b", "c", "d"], "links": links}
    assert topology["rows"] == [{"section": "links", **links[0]}] and topology["series"] == []


def test_plotly_is_served_from_the_installed_package() -> None:
    path = PlotlyFinder().find(PLOTLY_PATH)
    assert isinstance(path, str) and path.endswith("plotly.min.js") and Path(path).stat().st_size > 1_000_000


@pytest.mark.django_db
def test_the_dashboard_api_describes_nodes_edges_and_tiles(api: Callable[[str | None], APIClient]) -> None:
    west = Cluster.objects.create(alias="us-west", bootstrap_servers="127.0.0.1:1")
    east = Cluster.objects.create(alias="us-east", bootstrap_servers="127.0.0.1:2")
    Flow.objects.create(source=west, target=east, topics=["orders"], paused=True)
    body = api("viewer").get("/api/v1/dashboard/").json()
    assert [n["alias"] for n in body["nodes"]] == ["us-east", "us-west"]
    assert body["edges"][0]["health"] == "paused" and body["edges"][0]["name"] == "us-west->us-east"
    assert body["tiles"]["flows"] == 1 and body["tiles"]["unhealthy"] == 0
    assert api("nobody").get("/api/v1/dashboard/").status_code == 403


@pytest.mark.django_db
def test_the_edges_api_answers_for_the_named_flows_only(api: Callable[[str | None], APIClient]) -> None:
    west = Cluster.objects.create(alias="us-west", bootstrap_servers="127.0.0.1:1")
    east = Cluster.objects.create(alias="us-east", bootstrap_servers="127.0.0.1:2")
    made = [
        Flow.objects.create(source=a, target=b, topics=["orders"], paused=True) for a, b in ((west, east), (east, west))
    ]
    client = api("viewer")
    body = client.get(f"/api/v1/dashboard/edges/?flows={made[1].pk},999999").json()
    assert [(e["id"], e["name"], e["health"]) for e in body["edges"]] == [(made[1].pk, "us-east->us-west", "paused")]
    for bad in ("", "1,abc", ",".join(["1"] * 1001), "99999999999"):
        response = client.get(f"/api/v1/dashboard/edges/?flows={bad}")
        assert (response.status_code, list(response.json())) == (400, ["flows"]), bad
    assert api("nobody").get(f"/api/v1/dashboard/edges/?flows={made[0].pk}").status_code == 403


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/", "/clusters/", "/flows/", "/failover/"])
def test_every_page_needs_a_login(client: Client, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 302 and response["Location"].startswith("/login/")


@pytest.mark.django_db
def test_a_user_without_a_role_sees_no_page(client: Client, django_user_model: Any) -> None:
    client.force_login(django_user_model.objects.create_user("nobody", password="x"))
    assert client.get("/").status_code == 403


@pytest.mark.django_db
def test_the_preview_lists_the_loops_a_new_flow_closes_up_to_twenty() -> None:
    west, east, backup = (Cluster.objects.create(alias=a, bootstrap_servers="127.0.0.1:1") for a in ALIASES)
    for source, target in ((east, west), (east, backup), (backup, west)):
        Flow.objects.create(source=source, target=target, topics=["orders"])
    new = {"source": west, "target": east}
    assert preview.loops(new, None) == ["us-west -> us-east -> us-west", "us-west -> us-east -> backup -> us-west"]
    for n in range(25):
        hop = Cluster.objects.create(alias=f"hop-{n:02}", bootstrap_servers="127.0.0.1:1")
        Flow.objects.create(source=east, target=hop, topics=["orders"])
        Flow.objects.create(source=hop, target=west, topics=["orders"])
    loops = preview.loops(new, None)
    assert len(loops) == preview.MAX_LOOPS == 20
    assert loops[:2] == ["us-west -> us-east -> us-west", "us-west -> us-east -> hop-24 -> us-west"]


@pytest.mark.django_db
def test_a_paused_flows_edge_tile_and_lag_alert_read_one_live_figure(api: Callable[[str | None], APIClient]) -> None:
    """While a flow is paused its tasks' last report (lag 2) stays frozen as the source grows; the graph's edge, the
    total-lag tile and the lag alert all read the observer's stopped lag (382) instead. A stale observation is no
    data for all three alike."""
    from controlplane.alerts.choices import AlertKind
    from controlplane.alerts.services.figures import readings
    from controlplane.monitoring.models import FlowObservation
    from controlplane.orchestration.models import TaskAssignment
    from controlplane.orchestration.services.taskreports import Reporter
    from replication.metrics.registry import MetricsRegistry

    west = Cluster.objects.create(alias="us-west", bootstrap_servers="127.0.0.1:1")
    east = Cluster.objects.create(alias="us-east", bootstrap_servers="127.0.0.1:2")
    flow = Flow.objects.create(source=west, target=east, topics=["orders"], paused=True)
    assignment = TaskAssignment.objects.create(flow=flow, task_id=0, partitions=[["orders", 0]])
    metrics = MetricsRegistry()
    metrics.set_lag(flow.name, "orders", 0, 2)
    metrics.set_position(flow.name, "orders", 0, 10)
    Reporter(flow.pk, assignment.pk, flow.name, 0).write_partitions(metrics.snapshot()["flows"][flow.name])
    observation = FlowObservation.objects.create(flow=flow, at=timezone.now(), stopped_lag=382)

    def figures() -> tuple[Any, Any, Any]:
        body = api("viewer").get("/api/v1/dashboard/").json()
        alert = next(r.value for r in readings(timezone.now()) if r.kind == AlertKind.LAG_RECORDS)
        return body["edges"][0]["lag"], body["tiles"]["total_lag"], alert

    assert figures() == (382, 382, 382.0)
    observation.at = timezone.now() - timedelta(hours=1)
    observation.save()
    assert figures() == (None, None, None)
