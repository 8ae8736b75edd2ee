"""The Content-Security-Policy in a real browser: every page loads and works with no violation.

The ``page`` fixture already fails a test on any CSP message Chromium prints; this test also listens for the DOM's
``securitypolicyviolation`` events, so a refused style or script cannot pass unnoticed, and checks that what the
policy could break works: the Plotly graph and charts render, the scripts fill the pages in.
"""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from controlplane.alerts.choices import AlertKind, AlertState
from controlplane.alerts.models import Alert
from controlplane.clusters.models import Cluster
from controlplane.failover.models import Failover
from controlplane.flows.models import Flow
from controlplane.monitoring.models import FlowSample
from tests.browser.conftest import PASSWORD, log_in, shoot
from tests.support.kafka import wait_until

pytestmark = [pytest.mark.kafka, pytest.mark.django_db(transaction=True)]

RECORD_VIOLATIONS = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) =>
  window.__csp.push(`${e.violatedDirective} ${e.blockedURI} ${e.sourceFile}:${e.lineNumber}:${e.columnNumber}`));
"""


def violations(page: Page) -> list[str]:
    return list(page.evaluate("window.__csp || ['no recorder']"))


def visit(page: Page, url: str, ready: str) -> None:
    page.goto(url)
    expect(page.locator(ready).first).to_be_visible(timeout=30_000)  # Swagger UI rendered past 5 s in a loaded CI
    assert violations(page) == [], f"{url}: {violations(page)}"


def test_every_page_works_under_the_policy_with_no_violation(
    page: Page, live_server: LiveServer, kafka_clusters: dict[str, str]
) -> None:
    run = uuid.uuid4().hex[:4]
    source = Cluster.objects.create(alias=f"csp-west-{run}", bootstrap_servers=kafka_clusters["us-west"])
    target = Cluster.objects.create(alias=f"csp-east-{run}", bootstrap_servers=kafka_clusters["us-east"])
    flow = Flow.objects.create(source=source, target=target, topics=[f"none-{run}"], enabled=False)
    now = timezone.now()
    for n in range(5):
        FlowSample.objects.create(
            flow=flow,
            at=now - timedelta(seconds=10 * (5 - n)),
            records=100 * n,
            records_per_second=10.0 * n,
            lag=5 - n,
            latency_p99_ms=20.0 + n,
            health="healthy",
        )
    admin = User.objects.create_superuser("csp-admin", password=PASSWORD)
    failover = Failover.objects.create(
        mode="planned", source=source, target=target, groups=["billing"], created_by=admin
    )
    alert = Alert.objects.create(
        kind=AlertKind.LAG_RECORDS,
        subject=f"flow:{flow.pk}",
        name=flow.name,
        flow=flow,
        state=AlertState.FIRING,
        value=52_000,
        threshold=10_000,
        message=f"{flow.name}: Replication lag (records) 52,000 records above 10,000",
        started_at=now,
        fired_at=now,
    )
    page.add_init_script(RECORD_VIOLATIONS)
    base = live_server.url

    visit(page, f"{base}/login/", "input[name=username]")
    visit(page, f"{base}/admin/login/", "input[name=username]")
    log_in(page, base, "csp-admin")

    # Plotly drew the graph: its SVG with one node per cluster; its hover/modebar rules needed no inline CSS.
    visit(page, f"{base}/", "#graph .main-svg")
    wait_until(
        lambda: flow.name in (page.locator("#graph").get_attribute("data-edges") or ""),
        timeout=15,
        what="the flow's edge on the graph",
    )
    shoot(page, "csp-dashboard")
    visit(page, f"{base}/flows/", f"text={flow.name}")
    visit(page, f"{base}/flows/{flow.pk}/", "#chart-rps .main-svg")
    expect(page.locator("#chart-lag .main-svg").first).to_be_visible()
    visit(page, f"{base}/flows/new/", "form")
    visit(page, f"{base}/flows/{flow.pk}/edit/", "form")
    visit(page, f"{base}/flows/import/", "#f-properties")
    visit(page, f"{base}/clusters/", f"text={source.alias}")
    visit(page, f"{base}/clusters/new/", "form")
    visit(page, f"{base}/clusters/{source.pk}/", "form")
    visit(page, f"{base}/failover/", "#plan-form")
    visit(page, f"{base}/failover/{failover.pk}/", "#stepper li")
    shoot(page, "csp-failover-wizard")
    visit(page, f"{base}/alerts/", f"#alerts tr[data-alert='{alert.pk}']")
    expect(page.locator("#firing-count")).to_have_text("1")
    visit(page, f"{base}/api/docs/", ".swagger-ui .info")

    visit(page, f"{base}/admin/", "#content")
    assert violations(page) == []
