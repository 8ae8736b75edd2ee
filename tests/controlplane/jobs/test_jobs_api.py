"""Slow actions as background jobs: the connectivity check and the flow preview answer 202 at once, one runner
claims each job, a dead job turns stale with its reason, and nobody reads a kind of job their role cannot start."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import redis
from django.conf import settings
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from controlplane.audit.models import AuditRecord
from controlplane.clusters import services as cluster_services
from controlplane.clusters.models import Cluster
from controlplane.jobs import services
from controlplane.jobs.models import Job
from controlplane.jobs.tasks import run_job
from tests.support.celery import Processes, start_celery
from tests.support.kafka import wait_until

Api = Callable[[str | None], APIClient]
PASSWORD = "s3cret-never-in-a-job"
UNREACHABLE = "127.0.0.1:1"


@pytest.fixture
def no_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """Jobs are queued but nothing runs them (as with no worker started)."""
    monkeypatch.setattr(run_job, "delay_on_commit", lambda *args: None)


def poll(client: APIClient, job: dict[str, Any], timeout: float = 30.0) -> dict[str, Any]:
    def ended() -> dict[str, Any] | None:
        body: dict[str, Any] = client.get(job["url"]).json()
        return body if body["state"] in ("succeeded", "failed") else None

    return wait_until(ended, timeout=timeout, interval=0.2, what=f"job {job['id']} to end")


# --- start, result, error ------------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_checking_an_unreachable_cluster_answers_202_and_the_job_fails_with_librdkafkas_error(
    api: Api, eager: None
) -> None:
    cluster = Cluster.objects.create(alias="nowhere", bootstrap_servers=UNREACHABLE)
    response = api("operator").post(f"/api/v1/clusters/{cluster.pk}/check/")
    assert response.status_code == 202, response.content
    job = poll(api("operator"), response.json())
    assert job["state"] == "failed" and job["result"] is None
    assert UNREACHABLE in job["error"] and "Connection refused" in job["error"]
    assert job["url"] == f"/api/v1/jobs/{job['id']}/"
    audit = AuditRecord.objects.get(action="cluster.check")
    assert audit.after is not None and audit.after["ok"] is False and audit.object_id == str(cluster.pk)
    assert Job.objects.get(pk=job["id"]).active_key is None  # the cluster can be checked again


@pytest.mark.django_db(transaction=True)
def test_an_unsaved_check_uses_only_the_request_password_and_keeps_it_out_of_the_job(
    api: Api, eager: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    Cluster.objects.create(
        alias="secure",
        bootstrap_servers=UNREACHABLE,
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="PLAIN",
        sasl_username="mirror",
    )
    Cluster.objects.filter(alias="secure").update(sasl_password_encrypted="stored-token-not-used")
    seen: list[str] = []
    real = cluster_services.connectivity_check
    monkeypatch.setattr(cluster_services, "connectivity_check", lambda c: seen.append(c.sasl_password) or real(c))
    body = {
        "alias": "secure2",
        "bootstrap_servers": UNREACHABLE,
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "PLAIN",
        "sasl_username": "mirror",
        "sasl_password": PASSWORD,
    }
    response = api("admin").post("/api/v1/clusters/check/", body, format="json")
    assert response.status_code == 202, response.content
    job = poll(api("admin"), response.json())
    assert seen == [PASSWORD]
    assert job["state"] == "failed" and "Connection refused" in job["error"]
    stored = Job.objects.get(pk=job["id"])
    assert stored.inputs == {}  # cleared when the job ended
    assert PASSWORD not in response.content.decode() and PASSWORD not in str(job)
    assert Cluster.objects.filter(alias="secure2").count() == 0


@pytest.mark.django_db(transaction=True)
def test_an_operator_checks_unsaved_settings_only_against_registered_brokers(api: Api, eager: None) -> None:
    Cluster.objects.create(alias="known", bootstrap_servers=f"{UNREACHABLE},127.0.0.1:2")
    refused = api("operator").post(
        "/api/v1/clusters/check/", {"alias": "x", "bootstrap_servers": "10.0.0.9:22"}, format="json"
    )
    assert refused.status_code == 403
    assert "10.0.0.9:22: not a broker of a registered cluster" in refused.json()["bootstrap_servers"][0]
    assert not Job.objects.exists()
    allowed = api("operator").post(
        "/api/v1/clusters/check/", {"alias": "x", "bootstrap_servers": "127.0.0.1:2"}, format="json"
    )
    assert allowed.status_code == 202
    admin = api("admin").post(
        "/api/v1/clusters/check/", {"alias": "x", "bootstrap_servers": "10.0.0.9:1"}, format="json"
    )
    assert admin.status_code == 202


@pytest.mark.django_db(transaction=True)
def test_the_preview_runs_as_a_job_and_reports_an_unlistable_source_in_its_result(api: Api, eager: None) -> None:
    Cluster.objects.create(alias="us-west", bootstrap_servers=UNREACHABLE)
    Cluster.objects.create(alias="us-east", bootstrap_servers=UNREACHABLE)
    response = api("viewer").post("/api/v1/flow-preview/", {"source": "us-west", "target": "us-east"}, format="json")
    assert response.status_code == 202, response.content
    job = poll(api("viewer"), response.json(), timeout=60)
    assert job["state"] == "succeeded" and job["kind"] == "flow.preview"
    assert job["result"]["error"].startswith("us-west: topics not listed")
    assert job["result"]["loops"] == [] and job["result"]["refused"] == ""


@pytest.mark.django_db
def test_bad_preview_input_is_a_400_naming_the_field_and_starts_no_job(api: Api, no_worker: None) -> None:
    Cluster.objects.create(alias="us-west", bootstrap_servers=UNREACHABLE)
    response = api("viewer").post("/api/v1/flow-preview/", {"source": "us-west", "target": "nope"}, format="json")
    assert response.status_code == 400 and "target" in response.json()
    assert not Job.objects.exists()


# --- permissions ---------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_viewer_neither_starts_nor_reads_a_check_but_reads_a_preview(api: Api, no_worker: None) -> None:
    cluster = Cluster.objects.create(alias="us-west", bootstrap_servers=UNREACHABLE)
    Cluster.objects.create(alias="us-east", bootstrap_servers=UNREACHABLE)
    assert api("viewer").post(f"/api/v1/clusters/{cluster.pk}/check/").status_code == 403
    check = api("operator").post(f"/api/v1/clusters/{cluster.pk}/check/").json()
    assert api("viewer").get(check["url"]).status_code == 404
    assert api("operator").get(check["url"]).json()["state"] == "queued"
    preview = api("viewer").post("/api/v1/flow-preview/", {"source": "us-west", "target": "us-east"}, format="json")
    assert api("viewer").get(preview.json()["url"]).status_code == 200
    assert api("nobody").get(preview.json()["url"]).status_code == 403
    assert api(None).get(preview.json()["url"]).status_code in (401, 403)


# --- one runner, busy, stale, unqueued -----------------------------------------------------------------------


@pytest.mark.django_db
def test_a_second_check_of_the_same_cluster_gets_409_with_the_running_job(api: Api, no_worker: None) -> None:
    cluster = Cluster.objects.create(alias="us-west", bootstrap_servers=UNREACHABLE)
    first = api("operator").post(f"/api/v1/clusters/{cluster.pk}/check/")
    assert (first.status_code, first.json()["state"]) == (202, "queued")
    assert first["Location"] == first.json()["url"]
    second = api("admin").post(f"/api/v1/clusters/{cluster.pk}/check/")
    assert second.status_code == 409
    assert second.json()["job"]["id"] == first.json()["id"] and "already queued" in second.json()["detail"]
    assert Job.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_concurrent_deliveries_of_a_job_run_it_once(monkeypatch: pytest.MonkeyPatch) -> None:
    if connection.vendor == "sqlite":
        pytest.skip("threads need a server database")
    runs: list[str] = []

    def slow(job: Job) -> dict[str, Any]:
        runs.append(threading.current_thread().name)
        time.sleep(0.3)  # keep the first runner inside the job while the others try to claim it
        return {"ok": True}

    monkeypatch.setitem(services._KINDS, "test.slow", services.Kind(name="test.slow", role="viewer", run=slow))
    job = services.start("test.slow", "test.slow:1", {}, None)
    outcomes: list[str] = []

    def deliver() -> None:
        try:
            outcomes.append(services.execute(str(job.pk)))
        finally:
            connection.close()  # each thread has its own connection

    threads = [threading.Thread(target=deliver) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert len(runs) == 1 and sorted(outcomes) == ["stale", "stale", "stale", "succeeded"]
    job.refresh_from_db()
    assert (job.state, job.result, job.active_key) == ("succeeded", {"ok": True}, None)


@pytest.mark.django_db
def test_a_job_no_worker_ran_turns_stale_with_its_reason_and_a_late_run_changes_nothing(
    api: Api, no_worker: None
) -> None:
    cluster = Cluster.objects.create(alias="us-west", bootstrap_servers=UNREACHABLE)
    job = api("operator").post(f"/api/v1/clusters/{cluster.pk}/check/").json()
    assert api("operator").get(job["url"]).json()["state"] == "queued"
    Job.objects.filter(pk=job["id"]).update(expires_at=timezone.now() - timedelta(seconds=1))  # time passes
    stale = api("operator").get(job["url"]).json()
    assert stale["state"] == "failed" and stale["error"].startswith("stale: no worker started the job within 60 s")
    assert services.execute(job["id"]) == "stale"
    assert Job.objects.get(pk=job["id"]).error == stale["error"]
    again = api("operator").post(f"/api/v1/clusters/{cluster.pk}/check/")
    assert again.status_code == 202 and again.json()["id"] != job["id"]


@pytest.mark.django_db
def test_a_running_job_whose_worker_died_turns_stale_and_frees_its_key(api: Api, no_worker: None) -> None:
    cluster = Cluster.objects.create(alias="us-west", bootstrap_servers=UNREACHABLE)
    job = api("operator").post(f"/api/v1/clusters/{cluster.pk}/check/").json()
    Job.objects.filter(pk=job["id"]).update(state="running", expires_at=timezone.now() - timedelta(seconds=1))
    again = api("operator").post(f"/api/v1/clusters/{cluster.pk}/check/")  # the stale holder is failed first
    assert again.status_code == 202
    old = api("operator").get(job["url"]).json()
    assert old["state"] == "failed" and "did not finish it within 60 s" in old["error"]


@pytest.mark.django_db
def test_ended_jobs_older_than_a_day_are_pruned_when_a_job_starts(api: Api, no_worker: None) -> None:
    cluster = Cluster.objects.create(alias="us-west", bootstrap_servers=UNREACHABLE)
    old, live = (Job.objects.create(kind="cluster.check", state=state) for state in ("failed", "running"))
    Job.objects.filter(pk__in=[old.pk, live.pk]).update(created_at=timezone.now() - timedelta(hours=25))
    assert api("operator").post(f"/api/v1/clusters/{cluster.pk}/check/").status_code == 202
    assert set(Job.objects.values_list("state", flat=True)) == {"running", "queued"}


@pytest.mark.django_db
def test_a_job_that_cannot_be_queued_is_a_503_naming_the_reason(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    def broker_down(*args: Any) -> None:
        raise ConnectionError("redis://127.0.0.1:6379: connection refused")

    monkeypatch.setattr(run_job, "delay_on_commit", broker_down)
    cluster = Cluster.objects.create(alias="us-west", bootstrap_servers=UNREACHABLE)
    response = api("operator").post(f"/api/v1/clusters/{cluster.pk}/check/")
    assert response.status_code == 503
    body = response.json()
    assert "could not be queued: ConnectionError: redis://127.0.0.1:6379" in body["detail"]
    assert body["job"]["state"] == "failed"
    assert api("operator").post(f"/api/v1/clusters/{cluster.pk}/check/").status_code == 503  # not 409: key freed


# --- a real worker -------------------------------------------------------------------------------------------


@pytest.fixture
def worker(celery_env: dict[str, str], celery_processes: Processes, tmp_path: Path) -> None:
    broker = str(settings.CELERY_BROKER_URL)
    if broker.startswith("redis://"):
        redis.Redis.from_url(broker).flushdb()
    start_celery({**celery_env, "CELERY_BROKER_URL": broker}, celery_processes, tmp_path, "w1", concurrency=2)


@pytest.mark.kafka
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_runs_checks_to_success_and_to_librdkafkas_error(
    api: Api, worker: None, kafka_clusters: dict[str, str]
) -> None:
    good = Cluster.objects.create(alias="us-west", bootstrap_servers=kafka_clusters["us-west"])
    bad = Cluster.objects.create(alias="nowhere", bootstrap_servers=UNREACHABLE)
    client = api("operator")
    began = time.monotonic()
    started = [client.post(f"/api/v1/clusters/{cluster.pk}/check/") for cluster in (good, bad)]
    answered = time.monotonic() - began
    assert [r.status_code for r in started] == [202, 202] and answered < 2.0, answered
    ok, failed = (poll(client, r.json(), timeout=90) for r in started)
    assert ok["state"] == "succeeded" and ok["result"]["ok"] is True and ok["result"]["brokers"], ok
    assert ok["started_at"] is not None and ok["error"] == ""
    assert failed["state"] == "failed" and "Connection refused" in failed["error"], failed
