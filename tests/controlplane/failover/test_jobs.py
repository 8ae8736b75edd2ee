"""Wizard steps as background jobs, without Kafka: the claim, the 202/409 contract, storing results and errors only
under the claim's token, expiry of a dead job's claim, abort while a job runs, and the drain threshold."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from controlplane.audit.models import AuditRecord
from controlplane.clusters.models import Cluster
from controlplane.failover import steps
from controlplane.failover.models import Failover
from controlplane.failover.results import CheckResult, PreflightResult
from controlplane.failover.services import machine
from controlplane.failover.tasks import run_step
from controlplane.flows.models import Flow

URL = "/api/v1/failovers/"
Outcome = tuple[PreflightResult, bool]


@pytest.fixture
def flow(db: None) -> Flow:
    west = Cluster.objects.create(alias="us-west", bootstrap_servers="127.0.0.1:1")
    east = Cluster.objects.create(alias="us-east", bootstrap_servers="127.0.0.1:2")
    return Flow.objects.create(source=west, target=east, topics=["orders"])


@pytest.fixture
def planned(api: Callable[[str | None], APIClient], flow: Flow) -> int:
    body = {"mode": "planned", "source": "us-west", "target": "us-east", "groups": ["billing"]}
    response = api("operator").post(URL, body, format="json")
    assert response.status_code == 201, response.content
    return int(response.json()["id"])


def passes(failover: Failover, inputs: dict[str, Any]) -> Outcome:
    """A pre-flight that passes, saying in its one check the inputs it saw and whether a transaction was open."""
    seen = f"inputs {inputs}, in a transaction: {connection.in_atomic_block}"
    return PreflightResult(checks=(CheckResult("seen", "what the step saw", "pass", seen),)), True


def functions(function: Callable[[Failover, dict[str, Any]], Outcome]) -> Callable[[str], Any]:
    return lambda step: function


@pytest.mark.django_db
def test_a_step_post_answers_202_queued_and_a_concurrent_post_gets_409_with_the_job(
    api: Callable[[str | None], APIClient], planned: int
) -> None:
    client = api("operator")
    first = client.post(f"{URL}{planned}/preflight/", {"proceed": True}, format="json")
    assert first.status_code == 202, first.content
    job = first.json()["job"]
    assert (job["step"], job["state"], job["started_at"], job["expired"]) == ("preflight", "queued", None, False)
    assert job["inputs"] == {"proceed": True, "acknowledge": []}
    second = client.post(f"{URL}{planned}/preflight/", {}, format="json")
    assert second.status_code == 409
    assert second.json()["job"]["state"] == "queued"
    assert "already queued" in second.json()["detail"]


@pytest.mark.django_db
def test_the_job_stores_its_result_advances_and_audits_once_its_claim_runs(planned: int) -> None:
    token = machine.claim(planned, "preflight", {"proceed": True}, None)
    assert machine.execute(planned, token, functions(passes)) == "succeeded"
    failover = Failover.objects.get(pk=planned)
    assert (failover.step, failover.job_state, failover.job_error) == ("drain", "succeeded", "")
    assert failover.result(PreflightResult).checks[0].detail.startswith("inputs {'proceed': True}")
    assert failover.job_started_at is not None and failover.job_finished_at is not None
    assert AuditRecord.objects.filter(action="failover.preflight", object_id=str(planned)).count() == 1
    assert machine.execute(planned, token, functions(passes)) == "stale"  # delivered twice: runs once


@pytest.mark.django_db(transaction=True)
def test_the_step_runs_with_no_transaction_open(planned: int) -> None:
    token = machine.claim(planned, "preflight", {"proceed": True}, None)
    machine.execute(planned, token, functions(passes))
    assert Failover.objects.get(pk=planned).result(PreflightResult).checks[0].detail.endswith("transaction: False")


@pytest.mark.django_db
def test_a_failed_job_stores_its_reason_for_the_api_and_the_step_can_run_again(
    api: Callable[[str | None], APIClient], planned: int
) -> None:
    def breaks(failover: Failover, inputs: dict[str, Any]) -> Outcome:
        raise RuntimeError("KafkaError{code=_TRANSPORT}: the source does not answer")

    token = machine.claim(planned, "preflight", {}, None)
    assert machine.execute(planned, token, functions(breaks)) == "failed"
    job = api("viewer").get(f"{URL}{planned}/").json()["job"]
    assert (job["state"], job["result"]) == ("failed", None)
    assert job["error"] == "RuntimeError: KafkaError{code=_TRANSPORT}: the source does not answer"
    audit = AuditRecord.objects.get(action="failover.preflight", object_id=str(planned))
    assert audit.after == {"complete": False, "error": job["error"]}
    assert api("operator").post(f"{URL}{planned}/preflight/", {}, format="json").status_code == 202


@pytest.mark.django_db
def test_a_dead_jobs_claim_expires_and_its_late_result_is_discarded(
    api: Callable[[str | None], APIClient], planned: int
) -> None:
    dead = machine.claim(planned, "preflight", {}, None)
    Failover.objects.filter(pk=planned).update(job_state="running", job_expires_at=timezone.now() - timedelta(1))
    shown = api("viewer").get(f"{URL}{planned}/").json()["job"]
    assert (shown["state"], shown["expired"]) == ("running", True)
    retried = api("operator").post(f"{URL}{planned}/preflight/", {"proceed": True}, format="json")
    assert retried.status_code == 202
    assert machine.finish(planned, dead, PreflightResult(failed=("late",)), True) is False
    assert machine.execute(planned, dead, functions(passes)) == "stale"
    failover = Failover.objects.get(pk=planned)
    assert (failover.step, failover.job_state, "preflight" in failover.steps) == ("preflight", "queued", False)


@pytest.mark.django_db
def test_abort_is_refused_while_a_job_holds_the_failover_and_allowed_once_it_ended(
    api: Callable[[str | None], APIClient], planned: int
) -> None:
    client = api("operator")
    token = machine.claim(planned, "preflight", {}, None)
    refused = client.post(f"{URL}{planned}/abort/", {"reason": "drill"}, format="json")
    assert refused.status_code == 409
    assert refused.json()["job"]["state"] == "queued"
    assert Failover.objects.get(pk=planned).status == "active"
    machine.execute(planned, token, functions(lambda f, i: (PreflightResult(), False)))
    assert client.post(f"{URL}{planned}/abort/", {"reason": "drill"}, format="json").json()["status"] == "aborted"
    assert client.post(f"{URL}{planned}/preflight/", {}, format="json").status_code == 409


@pytest.mark.django_db
def test_the_drain_threshold_changes_without_starting_over_and_is_audited(
    api: Callable[[str | None], APIClient], planned: int
) -> None:
    Failover.objects.filter(pk=planned).update(step="drain")
    url = f"{URL}{planned}/drain-threshold/"
    assert api("viewer").post(url, {"drain_threshold": 5}, format="json").status_code == 403
    assert api("operator").post(url, {"drain_threshold": -1}, format="json").status_code == 400
    changed = api("operator").post(url, {"drain_threshold": 500}, format="json")
    assert (changed.status_code, changed.json()["drain_threshold"], changed.json()["step"]) == (200, 500, "drain")
    audit = AuditRecord.objects.get(action="failover.drain_threshold")
    assert (audit.before, audit.after) == ({"drain_threshold": 0}, {"drain_threshold": 500})
    Failover.objects.filter(pk=planned).update(step="fence")
    assert api("operator").post(url, {"drain_threshold": 5}, format="json").status_code == 409


@pytest.mark.django_db(transaction=True)
def test_with_an_eager_celery_the_post_answers_with_the_finished_job(
    api: Callable[[str | None], APIClient], planned: int, eager: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(steps.BY_NAME, "preflight", replace(steps.BY_NAME["preflight"], handler=passes))
    response = api("operator").post(f"{URL}{planned}/preflight/", {"proceed": True}, format="json")
    assert response.status_code == 202
    body = response.json()
    assert (body["step"], body["job"]["state"], body["job"]["result"]["checks"][0]["code"]) == (
        "drain",
        "succeeded",
        "seen",
    )
    assert body["job"]["result"] == body["steps"]["preflight"]["result"]
    assert api("viewer").get(f"{URL}{planned}/").json()["job"]["state"] == "succeeded"


@pytest.mark.django_db(transaction=True)
def test_a_job_that_cannot_be_queued_frees_the_step_and_says_why(
    api: Callable[[str | None], APIClient], planned: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broker_down(*args: Any) -> None:
        raise ConnectionError("redis://127.0.0.1:6379: connection refused")

    monkeypatch.setattr(run_step, "delay_on_commit", broker_down)
    response = api("operator").post(f"{URL}{planned}/preflight/", {}, format="json")
    assert response.status_code == 503
    job = response.json()["job"]
    assert job["state"] == "failed" and "could not be queued: ConnectionError" in job["error"]
