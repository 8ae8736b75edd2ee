"""Acceptance 2: bad form input shows field errors and saves nothing; and a viewer's pages are read-only."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from controlplane.jobs.models import Job
from tests.browser.conftest import log_in, make_user, shoot
from tests.browser.wizard import jobs_env
from tests.support.celery import Processes, start_celery

pytestmark = [pytest.mark.kafka, pytest.mark.django_db(transaction=True)]


def _errors(page: Page, field: str) -> object:
    return expect(page.locator(f'[data-errors-for="{field}"]'))


def test_bad_cluster_input_shows_field_errors_and_saves_nothing(page: Page, live_server: LiveServer) -> None:
    make_user("ada", "admin")
    log_in(page, live_server.url, "ada")
    page.goto(f"{live_server.url}/clusters/new/")
    page.fill("#f-alias", "us west!")
    page.fill("#f-bootstrap_servers", "no-port-here")
    page.select_option("#f-security_protocol", "SASL_SSL")
    page.click("#cluster-form button[type=submit]")
    for field in ("alias", "bootstrap_servers"):
        _errors(page, field).not_to_be_empty()  # type: ignore[attr-defined]
        expect(page.locator(f'.field[data-field="{field}"]')).to_have_class("field invalid")
    shoot(page, "cluster-form-errors")
    assert Cluster.objects.count() == 0
    assert page.url.endswith("/clusters/new/")


@pytest.fixture
def worker(celery_env: dict[str, str], celery_processes: Processes, tmp_path: Path) -> None:
    """A real worker for the check's and the preview's jobs, on the broker the live server enqueues them on."""
    start_celery(jobs_env(celery_env), celery_processes, tmp_path, "w1", concurrency=2)


def test_a_connectivity_test_runs_as_a_job_and_shows_the_exact_error_then_the_brokers(
    page: Page, live_server: LiveServer, kafka_clusters: dict[str, str], worker: None
) -> None:
    make_user("ada", "admin")
    log_in(page, live_server.url, "ada")
    page.goto(f"{live_server.url}/clusters/new/")
    page.fill("#f-alias", "nowhere")
    page.fill("#f-bootstrap_servers", "127.0.0.1:1")
    with page.expect_response(lambda r: r.url.endswith("/api/v1/clusters/check/")) as started:
        page.click("#check")
    assert started.value.status == 202
    expect(page.locator("#check")).to_be_disabled()  # while the job is queued or running
    error = page.locator("#check-result .alert.error")
    expect(error).to_contain_text("Cannot connect: ", timeout=60_000)
    expect(error).to_contain_text("127.0.0.1:1")
    expect(error).to_contain_text("Connection refused")
    expect(page.locator("#check")).to_be_enabled()
    shoot(page, "cluster-check-error")
    page.fill("#f-bootstrap_servers", kafka_clusters["us-west"])
    page.click("#check")
    expect(page.locator("#check-result .alert.ok")).to_contain_text("Connected: 1 broker", timeout=60_000)
    shoot(page, "cluster-check-ok")
    assert Cluster.objects.count() == 0
    assert sorted(Job.objects.values_list("state", flat=True)) == ["failed", "succeeded"]


def test_a_check_no_worker_runs_says_it_waits_for_one_then_that_it_did_not_run(
    page: Page, live_server: LiveServer
) -> None:
    cluster = Cluster.objects.create(alias="us-west", bootstrap_servers="127.0.0.1:1")
    make_user("ada", "admin")
    log_in(page, live_server.url, "ada")
    page.goto(f"{live_server.url}/clusters/{cluster.pk}/")
    page.click("#check")
    expect(page.locator('#check-result [data-job="queued"]')).to_contain_text("waiting for a worker", timeout=15_000)
    shoot(page, "cluster-check-waiting")
    Job.objects.update(expires_at=timezone.now() - timedelta(seconds=1))  # its time is up
    expect(page.locator("#check-result .alert.error")).to_contain_text(
        "The check did not run: stale: no worker started the job within 60 s", timeout=15_000
    )
    expect(page.locator("#check")).to_be_enabled()


def test_bad_flow_input_shows_field_errors_and_saves_nothing(
    page: Page, live_server: LiveServer, kafka_clusters: dict[str, str]
) -> None:
    for alias in ("us-west", "us-east"):
        Cluster.objects.create(alias=alias, bootstrap_servers=kafka_clusters[alias])
    make_user("ada", "admin")
    log_in(page, live_server.url, "ada")
    page.goto(f"{live_server.url}/flows/new/")
    page.select_option("#f-source", "us-west")
    page.select_option("#f-target", "us-east")
    page.fill("#f-topics", "orders[(")
    page.fill("#f-tasks_max", "many")
    page.click("#flow-form button[type=submit]")
    _errors(page, "topics").to_contain_text("invalid regular expression")  # type: ignore[attr-defined]
    _errors(page, "tasks_max").not_to_be_empty()  # type: ignore[attr-defined]
    shoot(page, "flow-form-errors")
    assert Flow.objects.count() == 0


def test_a_loop_the_policy_cannot_detect_is_previewed_and_refused(
    page: Page, live_server: LiveServer, kafka_clusters: dict[str, str], worker: None
) -> None:
    west, east = (Cluster.objects.create(alias=a, bootstrap_servers=kafka_clusters[a]) for a in ("us-west", "us-east"))
    Flow.objects.create(
        source=west, target=east, topics=["loop-.*"], replication_policy_class="IdentityReplicationPolicy"
    )
    make_user("ada", "admin")
    log_in(page, live_server.url, "ada")
    page.goto(f"{live_server.url}/flows/new/")
    page.select_option("#f-source", "us-east")
    page.select_option("#f-target", "us-west")
    page.fill("#f-topics", "loop-.*")
    page.select_option("#f-replication_policy_class", "IdentityReplicationPolicy")
    expect(page.locator("#loops .alert.error")).to_contain_text("Refused", timeout=20_000)
    page.click("#flow-form button[type=submit]")
    _errors(page, "target").to_contain_text("cannot detect")  # type: ignore[attr-defined]
    assert Flow.objects.count() == 1


def test_a_viewer_sees_read_only_pages(page: Page, live_server: LiveServer) -> None:
    west = Cluster.objects.create(alias="us-west", bootstrap_servers="127.0.0.1:1")
    east = Cluster.objects.create(alias="us-east", bootstrap_servers="127.0.0.1:2")
    flow = Flow.objects.create(source=west, target=east, topics=["orders"])
    make_user("vera", "viewer")
    log_in(page, live_server.url, "vera")
    page.goto(f"{live_server.url}/clusters/{west.pk}/")
    expect(page.locator("#f-alias")).to_have_value("us-west")
    expect(page.locator("#f-alias")).to_be_disabled()
    expect(page.locator("#cluster-form button[type=submit]")).to_have_count(0)
    expect(page.locator("#check")).to_have_count(0)
    page.goto(f"{live_server.url}/flows/{flow.pk}/")
    expect(page.locator("#health")).not_to_have_text("…")
    expect(page.locator("[data-op]")).to_have_count(0)
    expect(page.get_by_role("link", name="Edit")).to_have_count(0)
    assert page.goto(f"{live_server.url}/flows/new/").status == 403  # type: ignore[union-attr]
