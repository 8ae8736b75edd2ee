"""Acceptance 1: a new user logs in, adds two clusters and a flow through the forms, produces records, and sees
the flow's edge on the graph turn healthy with non-zero throughput (a real Celery worker and beat replicate)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from controlplane.flows.models import Flow
from tests.browser.conftest import log_in, make_user, shoot
from tests.browser.traffic import Traffic
from tests.browser.wizard import jobs_env
from tests.support.celery import Processes, start_celery
from tests.support.kafka import create_topic, unique_topic, wait_until

pytestmark = [pytest.mark.kafka, pytest.mark.django_db(transaction=True)]


def add_cluster(page: Page, base: str, alias: str, bootstrap: str) -> None:
    page.goto(f"{base}/clusters/new/")
    page.fill("#f-alias", alias)
    page.fill("#f-bootstrap_servers", bootstrap)
    page.click("#check")
    expect(page.locator("#check-result .alert.ok")).to_contain_text("Connected: 1 broker", timeout=20_000)
    page.get_by_role("button", name="Save cluster").click()
    page.wait_for_url(f"{base}/clusters/")
    expect(page.get_by_role("link", name=alias)).to_be_visible()


def add_flow(page: Page, base: str, topic: str) -> None:
    page.goto(f"{base}/flows/new/")
    page.select_option("#f-source", "us-west")
    page.select_option("#f-target", "us-east")
    page.fill("#f-topics", topic)
    page.locator("details summary").click()
    page.fill("#f-refresh_topics_interval_seconds", "5")
    page.fill("#f-offset_flush_interval_ms", "200")
    expect(page.locator("#preview")).to_contain_text(f"us-west.{topic}", timeout=20_000)
    shoot(page, "flow-form-preview")
    page.get_by_role("button", name="Create flow").click()
    page.wait_for_url(re.compile(r"/flows/\d+/$"))


def edges(page: Page) -> list[dict[str, Any]]:
    raw = page.locator("#graph").get_attribute("data-edges")
    return json.loads(raw) if raw else []


def healthy_with_throughput(page: Page, name: str) -> bool:
    return any(e["name"] == name and e["health"] == "healthy" and e["rps"] > 0 for e in edges(page))


def test_a_new_user_builds_a_flow_and_sees_it_turn_healthy_with_throughput(
    page: Page,
    live_server: LiveServer,
    kafka_clusters: dict[str, str],
    celery_env: dict[str, str],
    celery_processes: Processes,
    tmp_path: Path,
) -> None:
    env = {
        **jobs_env(celery_env),
        "MIRRORPLANE_SAMPLE_INTERVAL_SECONDS": "2",
        "MIRRORPLANE_OBSERVE_INTERVAL_SECONDS": "5",
    }
    start_celery(env, celery_processes, tmp_path, "w1", "beat", concurrency=4)
    topic = unique_topic("ui")
    create_topic(kafka_clusters["us-west"], topic, partitions=2)
    make_user("newbie", "admin")
    log_in(page, live_server.url, "newbie")
    # The graph's heading (the broker-health table under it says "No clusters yet." too).
    expect(page.get_by_role("heading", name="No clusters yet")).to_be_visible(timeout=30_000)
    shoot(page, "dashboard-empty")
    add_cluster(page, live_server.url, "us-west", kafka_clusters["us-west"])
    add_cluster(page, live_server.url, "us-east", kafka_clusters["us-east"])
    add_flow(page, live_server.url, topic)
    assert Flow.objects.get().name == "us-west->us-east"

    with Traffic(kafka_clusters["us-west"], topic, partitions=2, rate=200):
        page.goto(f"{live_server.url}/")
        try:
            wait_until(lambda: healthy_with_throughput(page, "us-west->us-east"), timeout=180, interval=1)
        except AssertionError:  # say what the graph and the flow's status showed instead
            status = page.request.get(f"{live_server.url}/api/v1/flows/{Flow.objects.get().pk}/status/").text()
            raise AssertionError(
                f"no healthy us-west->us-east edge with throughput in 180 s; edges: {edges(page)}; "
                f"status: {status[:3000]}"
            ) from None
        expect(page.locator("[data-tile=copied] .value")).not_to_have_text("0")
        page.wait_for_timeout(1000)
        shoot(page, "dashboard-graph")
        page.locator("#graph g.annotation").filter(has_text="/s").first.click()  # the edge's label
        page.wait_for_url(re.compile(rf"/flows/{Flow.objects.get().pk}/$"))
        expect(page.locator("#health")).to_have_text("healthy", timeout=20_000)
        page.wait_for_timeout(8000)  # a few more samples on the charts
        shoot(page, "flow-detail")
