"""Reports: operators request a job run over a window; the outcome (or the error) is stored and served."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.utils import timezone
from rest_framework.test import APIClient

from controlplane.reports import services
from controlplane.reports.models import Report

pytestmark = pytest.mark.django_db


def _client(role: str) -> APIClient:
    user = User.objects.create_user(f"{role}-{uuid.uuid4().hex[:6]}", password="x")
    user.groups.add(Group.objects.get(name=role))
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_an_operator_requests_a_report_and_its_summary_is_stored(
    monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any, settings: Any, tmp_path: Any
) -> None:
    settings.STATE_DIR = tmp_path
    calls: list[tuple[Any, ...]] = []

    def fake_run_job(job: str, lake: str, out: str, since: Any, until: Any, master: Any, **options: Any) -> dict:
        calls.append((job, lake, out, since, until, options))
        return {"job": job, "rows": 42}

    monkeypatch.setattr("replication.analytics.jobs.run_job", fake_run_job)
    until = timezone.now().replace(minute=0, second=0, microsecond=0)
    body = {
        "job": "audit",
        "since": (until - timedelta(hours=1)).isoformat(),
        "until": until.isoformat(),
        "parameters": {"window_minutes": 5},
    }
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = _client("operator").post("/api/v1/reports/", body, format="json")
    assert response.status_code == 201, response.content
    assert len(callbacks) == 1
    report = services.run(response.json()["id"])
    assert report.status == "SUCCEEDED" and report.summary == {"job": "audit", "rows": 42}
    assert report.duration_seconds is not None and report.output.endswith(f"audit-{report.pk}")
    assert calls[0][0] == "audit" and calls[0][5] == {"window_minutes": 5}
    served = _client("viewer").get(f"/api/v1/reports/{report.pk}/").json()
    assert served["status"] == "SUCCEEDED" and served["summary"]["rows"] == 42


def test_a_run_over_a_window_without_data_says_so(
    monkeypatch: pytest.MonkeyPatch, settings: Any, tmp_path: Any
) -> None:
    settings.STATE_DIR = tmp_path
    empty = {
        "job": "audit",
        "no_data": True,
        "note": "no data: no facts in the lake for this window",
        "source_records": 0,
        "completeness_pct": None,
    }
    monkeypatch.setattr("replication.analytics.jobs.run_job", lambda *args, **kwargs: empty)
    report = services.run(Report.objects.create(job="audit").pk)
    assert report.status == "NO_DATA"
    served = _client("viewer").get(f"/api/v1/reports/{report.pk}/").json()
    assert served["status"] == "NO_DATA" and served["summary"]["completeness_pct"] is None


def test_a_report_runs_once_however_often_its_task_is_delivered(
    monkeypatch: pytest.MonkeyPatch, settings: Any, tmp_path: Any
) -> None:
    settings.STATE_DIR = tmp_path
    runs: list[str] = []
    monkeypatch.setattr("replication.analytics.jobs.run_job", lambda job, *a, **k: runs.append(job) or {"facts": 1})
    report = Report.objects.create(job="latency")
    assert services.run(report.pk).status == "SUCCEEDED"
    assert services.run(report.pk).status == "SUCCEEDED"
    assert runs == ["latency"]


def test_a_failed_job_keeps_its_error(monkeypatch: pytest.MonkeyPatch, settings: Any, tmp_path: Any) -> None:
    settings.STATE_DIR = tmp_path

    def failing(*args: Any, **kwargs: Any) -> dict:
        raise ValueError("lake has no facts in the window")

    monkeypatch.setattr("replication.analytics.jobs.run_job", failing)
    report = services.run(Report.objects.create(job="latency").pk)
    assert report.status == "FAILED" and "lake has no facts" in report.error
    assert _client("viewer").get("/api/v1/reports/").json()[0]["error"].startswith("ValueError")


def test_viewers_cannot_request_and_bad_windows_are_refused() -> None:
    assert _client("viewer").post("/api/v1/reports/", {"job": "audit"}, format="json").status_code == 403
    now = timezone.now()
    bad = _client("operator").post(
        "/api/v1/reports/",
        {"job": "audit", "since": now.isoformat(), "until": (now - timedelta(hours=1)).isoformat()},
        format="json",
    )
    assert bad.status_code == 400 and bad.json() == {"until": ["must be after since"]}
    assert _client("operator").post("/api/v1/reports/", {"job": "nope"}, format="json").status_code == 400
    for parameters in ({"window\x00": 1}, {"window": "6\x000"}):  # Postgres refuses NUL in JSON: a 400, not a 500
        nul = _client("operator").post("/api/v1/reports/", {"job": "audit", "parameters": parameters}, format="json")
        assert nul.status_code == 400 and nul.json()["parameters"] == ["NUL bytes are not allowed."]
    assert Report.objects.count() == 0


def test_the_hourly_schedule_creates_one_report_per_job() -> None:
    reports = services.schedule_hourly()
    assert sorted(r.job for r in reports) == ["audit", "latency", "topology"]
    assert all(
        r.until is not None and r.since is not None and (r.until - r.since).total_seconds() == 3600 for r in reports
    )
