"""The flow page's and the dashboard's charts over a chosen time range: the last 30 minutes by default, then 6 hours,
then a custom window typed on a 24-hour clock in UTC; each chart plots exactly the samples of its window (on the
dashboard, summed over the flows), its axis spans the window, and a window that cannot be shown says why.

Screenshots: ``artifacts/screenshots/flow-chart-range.png``, ``dashboard-chart-range.png``."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from controlplane.monitoring.models import FlowSample
from tests.browser.conftest import log_in, make_user, shoot

pytestmark = pytest.mark.django_db(transaction=True)

PLOTTED = "() => ((document.getElementById('chart-lag').data || [{ y: [] }])[0].y || []).filter((v) => v !== null)"
AXIS = "() => document.getElementById('chart-lag').layout.xaxis.range.map((t) => new Date(t).getTime())"


def plotted(chart: str) -> str:
    return f"() => ((document.getElementById('{chart}').data || [{{ y: [] }}])[0].y || []).filter((v) => v !== null)"


def test_the_charts_show_the_chosen_range(page: Page, live_server: LiveServer) -> None:
    west = Cluster.objects.create(alias="us-west", bootstrap_servers="10.255.0.1:9092")
    east = Cluster.objects.create(alias="us-east", bootstrap_servers="10.255.0.2:9092")
    flow = Flow.objects.create(source=west, target=east, topics=["orders"], enabled=False)
    now = timezone.now().replace(second=0, microsecond=0)
    # lag = minutes ago, so each plotted value names its sample
    ago = [5, 10, 20, 180, 181, 182, 1200, 1201]
    FlowSample.objects.bulk_create(
        FlowSample(flow=flow, at=now - timedelta(minutes=m), records_per_second=1.0, lag=m, health="healthy")
        for m in ago
    )
    make_user("viewer-range", "viewer")
    log_in(page, live_server.url, "viewer-range")
    page.goto(f"{live_server.url}/flows/{flow.pk}/")

    select = page.locator("#chart-range-select")
    expect(select).to_have_value("30")
    page.wait_for_function(f"() => ({PLOTTED})().length > 0")
    assert sorted(page.evaluate(PLOTTED)) == [5, 10, 20]

    select.select_option("360")
    page.wait_for_function(f"() => ({PLOTTED})().length === 6")
    assert sorted(page.evaluate(PLOTTED)) == [5, 10, 20, 180, 181, 182]

    select.select_option("custom")
    since, until = now - timedelta(minutes=1210), now - timedelta(minutes=1190)
    page.fill("#chart-range-from-date", since.strftime("%Y-%m-%d"))
    page.fill("#chart-range-from-time", since.strftime("%H:%M"))
    page.fill("#chart-range-to-date", until.strftime("%Y-%m-%d"))
    page.fill("#chart-range-to-time", "3:05 PM")
    page.click("#chart-range-show")
    expect(page.locator("#chart-range-note")).to_contain_text("To: give a date and a 24-hour time")
    page.fill("#chart-range-to-time", until.strftime("%H:%M"))
    page.click("#chart-range-show")
    expect(page.locator("#chart-range-note")).to_have_text("")
    page.wait_for_function(f"() => ({PLOTTED})().length === 2")
    assert sorted(page.evaluate(PLOTTED)) == [1200, 1201]
    assert page.evaluate(AXIS) == [int(since.timestamp() * 1000), int(until.timestamp() * 1000)]
    ticks = page.locator("#chart-lag .xtick text").all_text_contents()
    assert ticks and not any("AM" in t or "PM" in t for t in ticks), ticks
    shoot(page, "flow-chart-range")


def test_the_dashboard_charts_sum_the_flows_over_the_chosen_range(page: Page, live_server: LiveServer) -> None:
    west, east, south = (
        Cluster.objects.create(alias=alias, bootstrap_servers=f"10.255.0.{n}:9092")
        for n, alias in enumerate(("us-west", "us-east", "eu-south"), start=1)
    )
    flows = [
        Flow.objects.create(source=west, target=east, topics=["orders"], enabled=False),
        Flow.objects.create(source=east, target=south, topics=["us-west.orders"], enabled=False),
    ]
    now = timezone.now().replace(second=0, microsecond=0)
    # The first flow's lag is the minutes ago, the second's 1,000 more: each plotted total is 1,000 + 2 x minutes.
    FlowSample.objects.bulk_create(
        FlowSample(
            flow=flow,
            at=now - timedelta(minutes=m),
            records_per_second=10.0 * (n + 1),
            lag=m + 1000 * n,
            health="healthy",
        )
        for m in (5, 10, 20, 180, 181, 182, 1200, 1201)
        for n, flow in enumerate(flows)
    )
    make_user("viewer-dashboard-range", "viewer")
    log_in(page, live_server.url, "viewer-dashboard-range")
    page.goto(f"{live_server.url}/")
    lag, copied = plotted("chart-total-lag"), plotted("chart-copied")

    select = page.locator("#chart-range-select")
    expect(select).to_have_value("30")
    page.wait_for_function(f"() => ({lag})().length > 0")
    assert sorted(page.evaluate(lag)) == [1010, 1020, 1040]
    assert page.evaluate(copied) == [30.0, 30.0, 30.0]
    assert set(page.evaluate("() => document.getElementById('chart-total-lag').data[0].text")) == {"2 flows"}
    expect(page.locator("#over-time-flows")).to_have_text("each point sums 2 flows")
    # No flow has a rate entering replication (not sampled): that chart says so rather than drawing nothing.
    expect(page.locator("#chart-entering")).to_contain_text("No data")

    select.select_option("360")
    page.wait_for_function(f"() => ({lag})().length === 6")
    assert sorted(page.evaluate(lag)) == [1010, 1020, 1040, 1360, 1362, 1364]
    expect(page.locator("#chart-range-merged")).to_contain_text("each point merges 60 s")

    select.select_option("custom")
    since, until = now - timedelta(minutes=1210), now - timedelta(minutes=1190)
    page.fill("#chart-range-from-date", since.strftime("%Y-%m-%d"))
    page.fill("#chart-range-from-time", since.strftime("%H:%M"))
    page.fill("#chart-range-to-date", until.strftime("%Y-%m-%d"))
    page.fill("#chart-range-to-time", until.strftime("%H:%M"))
    page.click("#chart-range-show")
    page.wait_for_function(f"() => ({lag})().length === 2")
    assert sorted(page.evaluate(lag)) == [3400, 3402]
    axis = "() => document.getElementById('chart-total-lag').layout.xaxis.range.map((t) => new Date(t).getTime())"
    assert page.evaluate(axis) == [int(since.timestamp() * 1000), int(until.timestamp() * 1000)]
    page.locator("#chart-total-lag").scroll_into_view_if_needed()
    shoot(page, "dashboard-chart-range")
