"""List search and per-partition lag: typing in the clusters list's search box filters the rows
through the API (and says when nothing matches), the failover list filters by state, and clicking a partition
on the flow page opens its lag chart ("No data" for a partition never sampled).

Screenshots: ``artifacts/screenshots/list-search-<what>.png`` at 1280x800."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import Page, Route, expect
from pytest_django.live_server_helper import LiveServer

from controlplane.clusters.models import Cluster
from controlplane.failover.models import Failover
from controlplane.flows.models import Flow
from controlplane.monitoring.models import PartitionLagSample
from controlplane.orchestration.models import PartitionReport, TaskAssignment
from controlplane.orchestration.taskstatus import STATS_KEYS, compact
from tests.browser.conftest import log_in, make_user, shoot

pytestmark = pytest.mark.django_db(transaction=True)

# Unroutable addresses: nothing on these pages dials a cluster, and no test broker is involved.
CLUSTERS = {
    "us-west": "10.255.0.1:9092",
    "us-east": "10.255.0.2:9092",
    "eu-west": "10.255.0.3:9092",
    "backup": "vault.invalid:9093",
}


def test_the_clusters_search_box_filters_the_rows_and_says_when_nothing_matches(
    page: Page, live_server: LiveServer
) -> None:
    for alias, servers in CLUSTERS.items():
        Cluster.objects.create(alias=alias, bootstrap_servers=servers)
    make_user("viewer-search", "viewer")
    log_in(page, live_server.url, "viewer-search")
    page.goto(f"{live_server.url}/clusters/")
    rows = page.locator("#clusters tbody tr")
    expect(rows).to_have_count(4)
    expect(page.locator("#clusters-range")).to_have_text("1\N{EN DASH}4 of 4")

    page.fill("#clusters-search", "WEST")
    expect(rows).to_have_count(2)
    expect(rows.locator("td:first-child")).to_have_text(["us-west", "eu-west"])
    expect(page.locator("#clusters-range")).to_have_text("1\N{EN DASH}2 of 2")
    shoot(page, "list-search-clusters")

    page.fill("#clusters-search", "vault")
    expect(rows.locator("td:first-child")).to_have_text(["backup"])
    page.fill("#clusters-search", "nowhere")
    expect(page.locator("#clusters tbody td.muted")).to_have_text("No cluster matches “nowhere”.")
    shoot(page, "list-search-clusters-no-match")


def test_the_failover_list_filters_by_state_and_search(page: Page, live_server: LiveServer) -> None:
    west, east, backup = (
        Cluster.objects.create(alias=a, bootstrap_servers=CLUSTERS[a]) for a in CLUSTERS if a != "eu-west"
    )
    ids = {
        name: Failover.objects.create(mode="planned", source=s, target=t, groups=g, status=state).pk
        for name, s, t, g, state in (
            ("billing", west, east, ["billing"], "completed"),
            ("shipping", east, backup, ["shipping"], "active"),
            ("refunds", west, backup, ["refunds"], "aborted"),
        )
    }
    make_user("viewer-failovers", "viewer")
    log_in(page, live_server.url, "viewer-failovers")
    page.goto(f"{live_server.url}/failover/")
    links = page.locator("#failovers tbody tr td:first-child a")
    expect(links).to_have_text([f"#{ids['refunds']}", f"#{ids['shipping']}", f"#{ids['billing']}"])
    page.select_option("#failovers-state", "active")
    expect(links).to_have_text([f"#{ids['shipping']}"])
    # Every column shows inside the card beside the wizard at 1280 px: "Started" was cut off, out of reach.
    started = page.locator("#failovers thead th").last.bounding_box()
    card = page.locator("#failovers").bounding_box()
    assert started is not None and card is not None
    assert started["x"] + started["width"] <= card["x"] + card["width"] + 1, (started, card)
    page.fill("#failovers-search", "nowhere")
    expect(page.locator("#failovers tbody td.muted")).to_have_text("No in progress failover matches “nowhere”.")
    page.fill("#failovers-search", "")
    expect(links).to_have_text([f"#{ids['shipping']}"])
    page.select_option("#failovers-state", "")
    page.fill("#failovers-search", "backup")
    expect(links).to_have_text([f"#{ids['refunds']}", f"#{ids['shipping']}"])
    shoot(page, "list-search-failovers")
    page.select_option("#failovers-state", "completed")
    expect(page.locator("#failovers tbody td.muted")).to_have_text("No completed failover matches “backup”.")


# Counts JSON bodies the page has read. The page's code that awaited a body runs in the same microtask checkpoint as
# this count, so once a wait sees the count, the page has shown (or dropped) that answer.
COUNT_BODIES = """
const json = Response.prototype.json;
window.bodiesRead = 0;
Response.prototype.json = function () {
  const body = json.call(this);
  body.then(() => { window.bodiesRead += 1; });
  return body;
};
"""


def test_an_older_answer_arriving_last_does_not_replace_the_newer_query(page: Page, live_server: LiveServer) -> None:
    """Answers can arrive out of order: here the answer for "completed" is held until the list has shown the newer
    query's (every state). The list must keep the newer one (before the fix it showed only the completed failover)."""
    west, east, backup = (
        Cluster.objects.create(alias=a, bootstrap_servers=CLUSTERS[a]) for a in CLUSTERS if a != "eu-west"
    )
    ids = [
        Failover.objects.create(mode="planned", source=s, target=t, groups=[g], status=state).pk
        for s, t, g, state in (
            (west, east, "billing", "completed"),
            (east, backup, "shipping", "active"),
            (west, backup, "refunds", "aborted"),
        )
    ]
    everything = [f"#{pk}" for pk in reversed(ids)]
    make_user("viewer-order", "viewer")
    log_in(page, live_server.url, "viewer-order")
    page.add_init_script(COUNT_BODIES)
    page.goto(f"{live_server.url}/failover/")
    links = page.locator("#failovers tbody tr td:first-child a")
    expect(links).to_have_text(everything)

    held: list[Route] = []
    page.route(lambda url: "/api/v1/failovers/?" in url and "state=completed" in url, lambda route: held.append(route))
    page.select_option("#failovers-state", "completed")
    for _ in range(100):  # route handlers run while Playwright waits: up to 10 s for the request
        if held:
            break
        page.wait_for_timeout(100)
    assert held, "the page sent no request for completed failovers"
    page.select_option("#failovers-state", "")
    expect(links).to_have_text(everything)
    read = page.evaluate("window.bodiesRead")
    held[0].continue_()
    page.wait_for_function("(read) => window.bodiesRead > read", arg=read)  # a function: the page's CSP forbids eval
    expect(links).to_have_text(everything)


def snapshot(lag: int) -> list[object]:
    """A partition's report as a task stores it (``taskstatus.compact``)."""
    stats = dict.fromkeys(STATS_KEYS)
    values = {"replication-record-lag": lag, "position": 1_000, "replication-latency-ms": stats, "record-age-ms": stats}
    return compact(values)


def test_clicking_a_partition_opens_its_lag_chart(page: Page, live_server: LiveServer) -> None:
    west = Cluster.objects.create(alias="us-west", bootstrap_servers=CLUSTERS["us-west"])
    east = Cluster.objects.create(alias="us-east", bootstrap_servers=CLUSTERS["us-east"])
    flow = Flow.objects.create(source=west, target=east, topics=["orders"], enabled=False)
    task = TaskAssignment.objects.create(flow=flow, task_id=0)
    now = timezone.now()
    for partition, lag in ((0, 12), (1, 480), (2, 0)):
        PartitionReport.objects.create(
            flow=flow,
            assignment=task,
            topic="orders",
            partition=partition,
            lag=lag,
            updated_at=now,
            snapshot=snapshot(lag),
        )
    lags = [900, 820, 760, 700, 610, 560, 520, 480]
    for n, lag in enumerate(lags):
        at = now - timedelta(minutes=2 * (len(lags) - n))
        PartitionLagSample.objects.create(flow=flow, topic="orders", partition=1, at=at, lag=lag)
    make_user("viewer-lag", "viewer")
    log_in(page, live_server.url, "viewer-lag")
    page.goto(f"{live_server.url}/flows/{flow.pk}/")
    row = page.locator('#partitions tr[data-partition="orders-1"]')
    expect(row).to_be_visible()
    expect(page.locator("#partition-lag")).to_be_hidden()

    row.click()
    expect(page.locator("#partition-lag-name")).to_have_text("orders-1")
    expect(row).to_have_class("selected")
    chart = page.locator("#chart-partition-lag")
    expect(chart.locator(".main-svg").first).to_be_visible()
    plotted = page.evaluate("document.querySelector('#chart-partition-lag').data[0].y")
    assert plotted == lags
    assert page.evaluate("document.querySelector('#chart-partition-lag').layout.annotations.length") == 0
    page.locator("#partition-lag").scroll_into_view_if_needed()
    shoot(page, "list-search-partition-lag")

    page.locator('#partitions tr[data-partition="orders-2"]').click()
    expect(page.locator("#partition-lag-name")).to_have_text("orders-2")
    expect(chart.locator(".annotation-text")).to_have_text("No data")
    assert page.evaluate("document.querySelector('#chart-partition-lag').data[0].y") == []
    shoot(page, "list-search-partition-lag-no-data")
