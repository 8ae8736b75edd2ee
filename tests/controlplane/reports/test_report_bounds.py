"""Report runs stay within bounds: a few queued or running at once (429 naming the limit), windows the lake can hold,
and only the options each job declares (400 naming the field) reach the job."""

from __future__ import annotations

import threading
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.db import connection
from django.utils import timezone
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from controlplane.reports import services
from controlplane.reports.choices import ReportJob, ReportStatus
from controlplane.reports.models import Report
from replication.analytics.options import JOB_NAMES

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _limits(settings: Any, tmp_path: Any) -> None:
    settings.STATE_DIR = tmp_path
    settings.MIRRORPLANE_REPORT_MAX_ACTIVE_PER_USER = 3
    settings.MIRRORPLANE_REPORT_MAX_ACTIVE = 10
    settings.MIRRORPLANE_FACTS_RETENTION_HOURS = 24


def _operator() -> tuple[User, APIClient]:
    user = User.objects.create_user(f"operator-{uuid.uuid4().hex[:6]}", password="x")
    user.groups.add(Group.objects.get(name="operator"))
    client = APIClient()
    client.force_authenticate(user)
    return user, client


def _hour() -> dict[str, str]:
    until = timezone.now().replace(second=0, microsecond=0)
    return {"since": (until - timedelta(hours=1)).isoformat(), "until": until.isoformat()}


def _request(client: APIClient, job: str = "latency", **body: Any) -> Any:
    return client.post("/api/v1/reports/", {"job": job, **_hour(), **body}, format="json")


# -- runs queued or running at once ----------------------------------------------------------------------------
def test_a_users_run_past_the_per_user_limit_is_a_429_naming_the_limit() -> None:
    _, client = _operator()
    assert [_request(client).status_code for _ in range(3)] == [201, 201, 201]

    refused = _request(client)

    assert refused.status_code == 429
    assert refused.json() == {
        "detail": "Too many report runs queued or running: at most 3 per user "
        "(MIRRORPLANE_REPORT_MAX_ACTIVE_PER_USER).",
        "limit": "MIRRORPLANE_REPORT_MAX_ACTIVE_PER_USER",
        "value": 3,
    }
    assert Report.objects.count() == 3
    assert _request(_operator()[1]).status_code == 201  # another user's slots are their own


def test_the_global_limit_counts_every_users_runs(settings: Any) -> None:
    settings.MIRRORPLANE_REPORT_MAX_ACTIVE = 4
    first, second = _operator()[1], _operator()[1]
    assert [_request(c).status_code for c in (first, first, second, second)] == [201] * 4

    refused = _request(_operator()[1])

    assert refused.status_code == 429
    assert (refused.json()["limit"], refused.json()["value"]) == ("MIRRORPLANE_REPORT_MAX_ACTIVE", 4)
    assert Report.objects.count() == 4


def test_a_finished_run_frees_its_slot(settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    settings.MIRRORPLANE_REPORT_MAX_ACTIVE_PER_USER = 1
    monkeypatch.setattr("replication.analytics.jobs.run_job", lambda *args, **kwargs: {"facts": 1})
    _, client = _operator()
    first = _request(client)
    assert (first.status_code, _request(client).status_code) == (201, 429)

    assert services.run(first.json()["id"]).status == ReportStatus.SUCCEEDED

    assert _request(client).status_code == 201


def test_a_running_run_holds_its_slot_and_an_abandoned_one_does_not(settings: Any) -> None:
    settings.MIRRORPLANE_REPORT_MAX_ACTIVE_PER_USER = 1
    user, client = _operator()
    held = Report.objects.create(job="audit", status=ReportStatus.RUNNING, requested_by=user)
    assert _request(client).status_code == 429

    Report.objects.filter(pk=held.pk).update(created_at=timezone.now() - services.ABANDONED_AFTER)

    assert _request(client).status_code == 201


@pytest.mark.django_db(transaction=True)
def test_concurrent_requests_never_take_more_slots_than_there_are() -> None:
    user, _ = _operator()
    start = threading.Barrier(8)
    outcomes: list[str] = []

    def request() -> None:
        try:
            start.wait(10)
            services.submit("latency", requested_by=user)
            outcomes.append("queued")
        except services.ActiveLimitReached:
            outcomes.append("refused")
        finally:
            connection.close()

    threads = [threading.Thread(target=request) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)

    assert sorted(outcomes) == ["queued"] * 3 + ["refused"] * 5
    assert Report.objects.filter(requested_by=user).count() == 3


def test_the_hourly_schedule_queues_only_what_the_global_limit_leaves(settings: Any) -> None:
    settings.MIRRORPLANE_REPORT_MAX_ACTIVE = 2
    Report.objects.create(job="audit")

    assert [r.job for r in services.schedule_hourly()] == [ReportJob.values[0]]
    assert Report.objects.count() == 2


def test_the_openapi_schema_documents_the_429() -> None:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    responses = schema["paths"]["/api/v1/reports/"]["post"]["responses"]
    limit = responses["429"]["content"]["application/json"]["schema"]

    assert {"201", "400", "429"} <= set(responses)  # beside the refusals every operation documents (core.schema)
    assert limit == {"$ref": "#/components/schemas/ReportLimit"}
    assert set(schema["components"]["schemas"]["ReportLimit"]["properties"]) == {"detail", "limit", "value"}


# -- the window --------------------------------------------------------------------------------------------------
def _at(hours: float = 0, minutes: float = 0) -> str:
    return (timezone.now() + timedelta(hours=hours, minutes=minutes)).isoformat()


H, M = 1.0, 1 / 60  # window ends below, in hours from now, or a literal time


def _window(ends: dict[str, float | str]) -> dict[str, str]:
    return {field: end if isinstance(end, str) else _at(hours=end) for field, end in ends.items()}


@pytest.mark.parametrize(
    ("ends", "field", "reason"),
    [
        ({"since": -1 * H, "until": -2 * H}, "until", "must be after since"),
        ({"since": -1 * H, "until": "2999-01-01T00:00:00Z"}, "until", "must not be more than 5 minutes in"),
        ({"until": 10 * M}, "until", "must not be more than 5 minutes in the future"),
        ({"since": 1 * H}, "since", "must not be in the future"),
        ({"since": "1970-01-01T00:00:00Z", "until": -1 * H}, "since", "or later: the facts lake keeps 24 h"),
        ({"since": -25 * H, "until": -1 * H}, "since", "(MIRRORPLANE_FACTS_RETENTION_HOURS)"),
        ({"until": -25 * H}, "until", "the facts lake keeps 24 h"),
    ],
)
def test_a_window_the_lake_cannot_hold_is_a_400_naming_the_field(
    ends: dict[str, float | str], field: str, reason: str
) -> None:
    response = _operator()[1].post("/api/v1/reports/", {"job": "latency", **_window(ends)}, format="json")

    assert response.status_code == 400
    assert list(response.json()) == [field]
    assert reason in response.json()[field][0]
    assert not Report.objects.exists()


def test_windows_within_the_retention_and_the_clock_skew_are_accepted() -> None:
    _, client = _operator()
    windows = [
        {"since": _at(hours=-24, minutes=2), "until": _at(minutes=4)},  # a client clock a little ahead of ours
        {"since": _at(hours=-1)},  # until now
        {},  # the whole lake, which holds only the retention
    ]
    assert [client.post("/api/v1/reports/", {"job": "audit", **w}, format="json").status_code for w in windows] == [
        201
    ] * 3


def test_the_window_bound_follows_the_retention_setting(settings: Any) -> None:
    settings.MIRRORPLANE_FACTS_RETENTION_HOURS = 48
    week_old = {"since": _at(hours=-30), "until": _at(hours=-29)}
    assert _operator()[1].post("/api/v1/reports/", {"job": "audit", **week_old}, format="json").status_code == 201


# -- the job's options ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("job", "parameters", "reason"),
    [
        ("audit", {"window_seconds": 60}, "not an option of the audit job (its options are window_minutes, "),
        ("latency", {"window_minutes": 5}, "not an option of the latency job (it takes none)"),
        ("topology", {"window_minutes": 5}, "not an option of the topology job"),
    ],
)
def test_an_unknown_parameter_is_a_400_naming_it(job: str, parameters: dict[str, Any], reason: str) -> None:
    response = _request(_operator()[1], job, parameters=parameters)

    assert response.status_code == 400
    [name] = parameters
    assert list(response.json()["parameters"]) == [name]
    assert response.json()["parameters"][name][0].startswith(reason)
    assert not Report.objects.exists()


@pytest.mark.parametrize(
    ("job", "parameters", "reason"),
    [
        ("audit", {"window_minutes": "10"}, "must be an integer"),
        ("audit", {"window_minutes": 1.5}, "must be an integer"),
        ("audit", {"window_minutes": True}, "must be an integer"),
        ("audit", {"window_minutes": 0}, "must be at least 1"),
        ("audit", {"lookback_minutes": 10**9}, "must be at most 10080"),
        ("topology", {"dead_after": "5"}, "must be a number"),
        ("topology", {"collection_lag_s": -1}, "must be at least 0"),
        ("topology", {"flows": "a->b"}, "must be a list of flow names"),
        ("topology", {"flows": ["a-b"]}, "'a-b' is not a flow name"),
        ("topology", {"flows": ["a->b c"]}, "may contain only letters, digits"),
    ],
)
def test_a_wrong_typed_or_out_of_bounds_parameter_is_a_400_naming_it(
    job: str, parameters: dict[str, Any], reason: str
) -> None:
    response = _request(_operator()[1], job, parameters=parameters)

    assert response.status_code == 400
    [name] = parameters
    assert reason in response.json()["parameters"][name][0]
    assert not Report.objects.exists()


def test_valid_parameters_reach_the_job_as_validated(monkeypatch: pytest.MonkeyPatch) -> None:
    given: dict[str, dict[str, Any]] = {}

    def fake_run_job(job: str, *args: Any, **options: Any) -> dict[str, Any]:
        given[job] = options
        return {"facts": 1}

    monkeypatch.setattr("replication.analytics.jobs.run_job", fake_run_job)
    _, client = _operator()
    audit = _request(client, "audit", parameters={"window_minutes": 5, "late_after_ms": 0})
    topology = _request(client, "topology", parameters={"dead_after": 3, "flows": ["us-west->us-east"]})
    assert (audit.status_code, topology.status_code) == (201, 201)

    for response in (audit, topology):
        assert services.run(response.json()["id"]).status == ReportStatus.SUCCEEDED

    assert given == {
        "audit": {"window_minutes": 5, "late_after_ms": 0},
        "topology": {"dead_after": 3.0, "flows": ["us-west->us-east"]},
    }
    assert isinstance(given["topology"]["dead_after"], float)


def test_the_report_jobs_are_the_analytics_jobs() -> None:
    assert tuple(ReportJob.values) == JOB_NAMES


def test_the_beat_prunes_the_lake_to_the_retention(settings: Any, tmp_path: Any) -> None:
    settings.MIRRORPLANE_FACTS_LAKE = str(tmp_path / "lake")
    day = tmp_path / "lake" / "facts" / "date=2027-01-14"
    for hour in ("11", "12", "13"):
        (day / f"hour={hour}" / "flow=a->b").mkdir(parents=True)

    # 24 h before 12:30 the next day: hour 11 ended before then and goes; hour 12 ended after and stays
    assert services.prune_lake(datetime(2027, 1, 15, 12, 30, tzinfo=UTC)) == 1
    assert sorted(p.name for p in day.iterdir()) == ["hour=12", "hour=13"]
