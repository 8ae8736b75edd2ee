"""The drain in the browser under live traffic: it says the producers are still writing, its poller survives API
errors with one banner that clears, and the threshold changes from the page without starting over."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, Route, expect
from pytest_django.live_server_helper import LiveServer

from controlplane.audit.models import AuditRecord
from controlplane.failover.models import Failover
from controlplane.flows.services import cluster_config
from controlplane.monitoring.services.readers import newest_heartbeat
from tests.browser.conftest import log_in, make_user, shoot
from tests.browser.traffic import Traffic
from tests.browser.wizard import at_step, failover_setup, healthy, plan, preflight, start
from tests.support.celery import Processes
from tests.support.kafka import wait_until

pytestmark = [pytest.mark.kafka, pytest.mark.django_db(transaction=True)]
PARTITIONS = 2


def test_a_drain_to_zero_under_traffic_says_why_survives_api_errors_and_takes_a_new_threshold(
    page: Page,
    live_server: LiveServer,
    kafka_clusters: dict[str, str],
    celery_env: dict[str, str],
    celery_processes: Processes,
    tmp_path: Path,
) -> None:
    setup = failover_setup("drain", kafka_clusters, celery_env, celery_processes, tmp_path, PARTITIONS)
    topic, group, clusters, flow = setup.topic, setup.group, setup.clusters, setup.flow
    west = kafka_clusters["us-west"]
    make_user("olga", "operator")
    log_in(page, live_server.url, "olga")

    with Traffic(west, topic, PARTITIONS, rate=1000) as traffic:
        wait_until(lambda: traffic.sent > 3000 and healthy(flow), timeout=120, what="records and a healthy flow")
        target = cluster_config(clusters["us-east"])  # pre-flight blocks until a heartbeat made it to the target
        wait_until(lambda: newest_heartbeat(target, "us-west.heartbeats"), timeout=60, interval=0.5, what="a heartbeat")
        plan(page, live_server.url, group, "us-west", "us-east", "planned", 0)
        start(page)
        preflight(page, "drain-1-preflight")
        at_step(page, "drain")
        writing = page.locator("#panel .alert", has_text="producers are still writing")
        expect(writing.first).to_be_visible(timeout=60_000)
        expect(page.locator("#drain-eta")).to_be_visible()
        shoot(page, "drain-2-still-writing")

        def refuse(route: Route) -> None:
            route.fulfill(status=502, content_type="application/json", body='{"detail": "bad gateway (test)"}')

        page.route("**/api/v1/failovers/**", refuse)  # the API goes away for a while: retries, one banner
        banner = page.locator("#wizard-banner .banner")
        expect(banner).to_contain_text("Retrying in", timeout=30_000)
        page.wait_for_timeout(5000)  # several failed tries: still one banner, the drain text tells the truth
        expect(banner).to_have_count(1)
        expect(page.locator("#drain-every")).to_contain_text("Retrying in")
        shoot(page, "drain-3-api-error-banner")
        page.unroute("**/api/v1/failovers/**")
        expect(banner).to_have_count(0, timeout=40_000)
        expect(page.locator("#drain-every")).to_contain_text("Checking again 2 seconds")

        page.fill("#drain-threshold", "100000000")
        page.wait_for_timeout(4000)  # the drain re-renders meanwhile: what the operator typed stays
        expect(page.locator("#drain-threshold")).to_have_value("100000000")
        page.get_by_role("button", name="Change the threshold").click()
        at_step(page, "fence")
    failover = Failover.objects.get()
    assert failover.drain_threshold == 100_000_000
    assert AuditRecord.objects.filter(action="failover.drain_threshold", actor__username="olga").count() == 1
    drained = failover.entry("drain")
    assert drained is not None and drained.complete
