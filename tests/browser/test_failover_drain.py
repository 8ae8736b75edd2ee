"""The drain in the browser under live traffic: it says the producers are still writing, lists the partitions the
group reads with their lag, draws its trend on a labelled scale, offers the demo's traffic switch (while a demo runs)
on the drain and fence panels, its poller survives API errors with one banner that clears, and the threshold changes
from the page without starting over."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, Route, expect
from pytest_django.live_server_helper import LiveServer

from controlplane.audit.models import AuditRecord
from controlplane.failover.models import Failover
from controlplane.flows.services import cluster_config
from controlplane.monitoring.services.readers import newest_heartbeat
from localkafka.traffic import TrafficControl
from tests.browser.conftest import log_in, make_user, shoot
from tests.browser.traffic import Traffic
from tests.browser.wizard import at_step, failover_setup, healthy, plan, preflight, start
from tests.support.celery import Processes
from tests.support.failover import committed, consume_and_commit
from tests.support.kafka import wait_until

pytestmark = [pytest.mark.kafka, pytest.mark.django_db(transaction=True)]
PARTITIONS = 2
TICK = re.compile(r"^[\d.,]+[kM]? records$")  # a lag on the sparkline's scale: "950 records", "12.4k records"


@pytest.fixture
def demo_switch(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> TrafficControl:
    """A demo's traffic generator as the live server sees it (its status file names this process, so it "runs")."""
    control = TrafficControl(tmp_path / "demo-traffic")
    monkeypatch.setattr("controlplane.demo.services.traffic.control", lambda: control)
    status = {"pid": os.getpid(), "rate": 20.0, "topics": ["orders", "payments"], "paused": False, "group": "billing"}
    control.publish({**status, "produced": 100})
    return control


def test_a_drain_to_zero_under_traffic_says_why_survives_api_errors_and_takes_a_new_threshold(
    page: Page,
    live_server: LiveServer,
    kafka_clusters: dict[str, str],
    celery_env: dict[str, str],
    celery_processes: Processes,
    tmp_path: Path,
    demo_switch: TrafficControl,
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
        consume_and_commit(west, group, topic, 1000)  # the group reads the topic the producers write
        plan(page, live_server.url, group, "us-west", "us-east", "planned", 0)
        start(page)
        preflight(page, "drain-1-preflight")
        at_step(page, "drain")
        writing = page.locator("#panel .alert", has_text="producers are still writing")
        expect(writing.first).to_be_visible(timeout=60_000)
        expect(page.locator("#drain-eta")).to_be_visible()
        # the partitions the group committed on (it may not have read from both), not the whole flow's
        read = [p for p, offset in sorted(committed(west, group, topic, PARTITIONS).items()) if offset >= 0]
        expect(page.locator("#drain-partitions td.mono")).to_have_text([f"{topic}-{p}" for p in read])
        expect(page.locator("#drain-lag")).to_contain_text(f"on {len(read)} partition")
        ticks = {t: page.locator(f"#drain-sparkline [data-tick={t}]") for t in ("max", "min", "start", "end")}
        expect(ticks["end"]).to_contain_text(" span)")
        for tick in ("max", "min"):
            assert TICK.match(ticks[tick].text_content() or ""), ticks[tick].text_content()
        box = page.locator("#panel #wizard-demo-traffic")
        expect(box).to_contain_text("Demo traffic: producing 40 records/s on us-west, read by group billing")
        shoot(page, "drain-2-still-writing")
        box.locator("#demo-traffic-toggle").click()
        wait_until(demo_switch.requested_paused, timeout=10, what="the pause asked from the drain panel")

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
        expect(page.locator("#panel #wizard-demo-traffic")).to_contain_text("Demo traffic:")
        shoot(page, "drain-4-fence-with-demo-traffic")
    failover = Failover.objects.get()
    assert failover.drain_threshold == 100_000_000
    assert AuditRecord.objects.filter(action="failover.drain_threshold", actor__username="olga").count() == 1
    drained = failover.entry("drain")
    assert drained is not None and drained.complete
