"""The flow page's latest analytics reports: a report's rows about the flow are a table with its columns (they were
raw JSON lines), its whole-lake figures say they cover all flows, and a report without a row about the flow says so
instead of implying the flow was checked. The reports are pictures too: latency per path over time, the audit's
records per window, the topology as a graph with its dead links named; a chart over nothing says "no data", times
are 24-hour, and every table's columns fit the 1280 px page.

Screenshots: ``artifacts/screenshots/flow-reports.png`` at 1280x800, ``flow-report-charts-<light|dark|no-data>.png``
(the reports card)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from controlplane.reports.choices import ReportStatus
from controlplane.reports.models import Report
from tests.browser.conftest import SCREENSHOTS, log_in, make_user, shoot

pytestmark = pytest.mark.django_db(transaction=True)


def _summary(summary: dict[str, Any]) -> None:
    """A finished run of the summary's job, stored as ``reports.services.run`` stores one."""
    window = {key: datetime.fromisoformat(summary[key]) for key in ("since", "until") if key in summary}
    status = ReportStatus.NO_DATA if summary.get("no_data") else ReportStatus.SUCCEEDED
    Report.objects.create(
        job=summary["job"], status=status, finished_at=timezone.now(), duration_seconds=4.2, summary=summary, **window
    )


def test_a_reports_rows_about_the_flow_are_a_table_and_whole_lake_figures_say_so(
    page: Page, live_server: LiveServer
) -> None:
    west = Cluster.objects.create(alias="us-west", bootstrap_servers="10.255.0.1:9092")
    east = Cluster.objects.create(alias="us-east", bootstrap_servers="10.255.0.2:9092")
    flow = Flow.objects.create(source=west, target=east, topics=["orders"], enabled=False)
    mine = {"flow": flow.name, "facts": 2423, "replication_latency_ms_p50": 33, "replication_latency_ms_p99": 1453}
    other = {"flow": "us-east->backup", "facts": 7, "replication_latency_ms_p50": 5, "replication_latency_ms_p99": 9}
    _summary({"job": "latency", "facts": 4628, "records": 5804, "flows": [mine, other]})
    _summary({"job": "audit", "source_records": 5804, "missing": 0, "completeness_pct": 100.0})

    make_user("viewer-reports", "viewer")
    log_in(page, live_server.url, "viewer-reports")
    page.goto(f"{live_server.url}/flows/{flow.pk}/")
    reports = page.locator("#reports .report")
    expect(reports).to_have_count(2)
    audit, latency = reports.nth(0), reports.nth(1)

    expect(audit.locator("p").first).to_have_text("All flows: 5,804 source records · 0 missing · 100 % complete")
    expect(audit.locator("p.muted").last).to_have_text("No row of this report names this flow.")

    expect(latency.locator("p").first).to_have_text("All flows: 4,628 facts · 5,804 records")
    expect(latency.locator("h4")).to_have_text(["flows"])
    expect(latency.locator("thead th")).to_have_text(
        ["facts", "replication latency ms p50", "replication latency ms p99"]
    )
    expect(latency.locator("tbody tr")).to_have_count(1)  # only this flow's row
    expect(latency.locator("tbody td")).to_have_text(["2,423", "33", "1,453"])
    expect(page.locator("#reports pre")).to_have_count(0)  # no raw JSON
    page.locator("#reports").scroll_into_view_if_needed()
    shoot(page, "flow-reports")


SINCE, UNTIL = datetime(2027, 1, 15, 13, 0, tzinfo=UTC), datetime(2027, 1, 15, 14, 0, tzinfo=UTC)


def _at(minute: int) -> str:
    return f"2027-01-15T13:{minute:02d}:00Z"


def _latency_row(flow: str, facts: int) -> dict[str, object]:
    """A by-flow row as the latency job writes it: eleven columns besides the flow."""
    stats = {
        f"{m}_{s}": 10 * i + 1000
        for m in ("replication_latency_ms", "record_age_ms")
        for i, s in enumerate(("p50", "p95", "p99", "max"))
    }
    return {"flow": flow, "facts": facts, "records": 123456, "bytes": 98765432, **stats}


def _plotted(page: Page, selector: str) -> list[tuple[str, int]]:
    """Each trace Plotly drew in the chart: its name and how many points it has."""
    return [(t[0], t[1]) for t in page.locator(selector).evaluate("n => n.data.map(t => [t.name, t.x.length])")]


def _browser_time(page: Page, iso: str) -> datetime:
    zone = page.evaluate("() => Intl.DateTimeFormat().resolvedOptions().timeZone")
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).astimezone(ZoneInfo(zone))


def test_reports_are_charted_with_24_hour_times_and_every_table_column_fits_the_page(
    page: Page, live_server: LiveServer
) -> None:
    west = Cluster.objects.create(alias="us-west", bootstrap_servers="10.255.0.1:9092")
    east = Cluster.objects.create(alias="us-east", bootstrap_servers="10.255.0.2:9092")
    flow = Flow.objects.create(source=west, target=east, topics=["orders"], enabled=False)
    window = {"since": SINCE.isoformat(), "until": UNTIL.isoformat()}
    local, remote = "us-west->us-east", "eu->us-west->us-east"
    full = {f"replication_latency_ms_{s}": v for s, v in (("p50", 30), ("p95", 80), ("p99", 120), ("max", 400))}
    series = [{"flow": flow.name, "path": local, "at": _at(m), "facts": 50, **full} for m in (0, 20, 40)]
    # A path whose rows hold only p50 and p99: a trace for each figure the report has, no more.
    series += [
        {
            "flow": flow.name,
            "path": remote,
            "at": _at(m),
            "replication_latency_ms_p50": 210,
            "replication_latency_ms_p99": 900,
        }
        for m in (0, 30)
    ]
    series.append({"flow": "us-east->backup", "path": "us-east->backup", "at": _at(0), **full})  # another flow's
    latency = {"job": "latency", **window, "facts": 4628, "records": 5804, "series_minutes": 1, "series": series}
    latency["flows"] = [_latency_row(flow.name, 2423), _latency_row("us-east->backup", 7)]
    _summary(latency)
    windows = [
        {
            "flow": flow.name,
            "window_start": _at(m),
            "window_end": _at(m + 10),
            "source_records": 100,
            "complete": 93,
            "missing": 7 * (m == 10),
            "duplicates": 3,
            "late": 0,
        }
        for m in (0, 10, 20, 30)
    ]
    loss = [
        {
            "flow": flow.name,
            "topic": "orders",
            "partition": 3,
            "window_start": _at(10),
            "missing": 7,
            "missing_offsets": [{"first": 50, "last": 56}],
        }
    ]
    audit = {
        "job": "audit",
        **window,
        "source_records": 400,
        "missing": 7,
        "completeness_pct": 98.25,
        "series": windows,
        "loss": loss,
    }
    _summary(audit)
    links = [
        {
            "flow": flow.name,
            "source": "us-west",
            "target": "us-east",
            "heartbeats": 120,
            "configured": True,
            "observed": True,
            "dead": False,
            "silent": False,
            "unconfigured": False,
            "last_heartbeat_ms": 1_800_000_000_000,
        },
        {
            "flow": "us-east->backup",
            "source": "us-east",
            "target": "backup",
            "heartbeats": 4,
            "configured": True,
            "observed": True,
            "dead": True,
            "silent": False,
            "unconfigured": False,
            "last_heartbeat_ms": 1_799_999_000_000,
        },
    ]
    topology = {
        "job": "topology",
        **window,
        "heartbeat_arrivals": 124,
        "nodes": ["backup", "us-east", "us-west"],
        "links": links,
        "dead_links": ["us-east->backup"],
    }
    _summary(topology)

    make_user("viewer-charts", "viewer")
    log_in(page, live_server.url, "viewer-charts")
    page.goto(f"{live_server.url}/flows/{flow.pk}/")
    expect(page.locator("#reports .report")).to_have_count(3)

    # Latency: a chart per path of this flow, a trace per percentile the rows hold, a point per bucket.
    charts = page.locator("#reports [data-job=latency] [data-chart=latency]")
    expect(charts).to_have_count(2)
    expect(page.locator("#reports [data-job=latency] figcaption")).to_have_text(
        [f"Latency of path {local}", f"Latency of path {remote}"]
    )
    assert _plotted(page, f"#reports [data-path='{local}']") == [("p50", 3), ("p95", 3), ("p99", 3), ("max", 3)]
    assert _plotted(page, f"#reports [data-path='{remote}']") == [("p50", 2), ("p99", 2)]
    y_title = page.locator(f"#reports [data-path='{local}'] .ytitle")
    expect(y_title).to_have_text("ms")
    # Audit: complete, missing and duplicated records, stacked, one bar per window of this flow.
    audit_chart = "#reports [data-job=audit] [data-chart=audit]"
    assert _plotted(page, audit_chart) == [("complete", 4), ("missing", 4), ("duplicated", 4)]
    missing = page.locator(audit_chart).evaluate("n => n.data[1].y")
    assert missing == [0, 7, 0, 0]
    # Topology: an edge per link, the clusters as one trace of nodes, the dead link marked and named.
    graph = "#reports [data-job=topology] [data-chart=topology]"
    assert _plotted(page, graph) == [(flow.name, 3), ("us-east->backup", 3), ("clusters", 3)]
    dashes = page.locator(graph).evaluate("n => n.data.slice(0, 2).map(t => t.line.dash)")
    assert dashes == ["solid", "dot"]
    expect(page.locator(f"{graph} .annotation-text", has_text="dead")).to_have_text(["dead: us-east->backup"])
    expect(page.locator(f"{graph} .textpoint")).to_have_text(["backup", "us-east", "us-west"])

    # 24-hour times: the run's window, the reports' windows, a loss window's start, the charts' time axis.
    since, until = _browser_time(page, SINCE.isoformat()), _browser_time(page, UNTIL.isoformat())
    span = f"{since.day} {since:%b} {since:%H:%M}\u2013{until:%H:%M}"
    expect(page.locator("#report-runs tbody td").nth(2)).to_have_text(span)
    expect(page.locator("#reports .report h3 .faint").first).to_contain_text(span)
    start = _browser_time(page, _at(10))
    expect(page.locator("#reports [data-job=audit] tbody td").nth(2)).to_have_text(
        f"{start.day} {start:%b} {start.year}, {start:%H:%M:%S}"
    )
    ticks = page.locator(f"#reports [data-path='{local}'] .xtick text").all_text_contents()
    assert ticks and all(":" in t for t in ticks), ticks
    assert not [t for t in page.locator("#reports-card").all_inner_texts() if " AM" in t or " PM" in t]

    # Every column of every table in the reports card within the card, and so within the 1280 px page.
    card = page.locator("#reports-card").bounding_box()
    assert card is not None
    tables = page.locator("#reports-card table.data")
    expect(tables).to_have_count(4)  # the recent runs; the audit's loss, the latency's flows, the topology's links
    for i in range(tables.count()):
        last = tables.nth(i).locator("thead th").last.bounding_box()
        assert last is not None
        assert last["x"] + last["width"] <= min(card["x"] + card["width"], 1280), (i, last, card)

    page.locator("#reports-card").scroll_into_view_if_needed()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.locator("#reports-card").screenshot(path=str(SCREENSHOTS / "flow-report-charts-light.png"))
    page.emulate_media(color_scheme="dark")
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    panel = page.locator(graph).evaluate("n => n._fullLayout.paper_bgcolor")
    assert panel == "#171c27"  # redrawn on the dark panel
    page.locator("#reports-card").screenshot(path=str(SCREENSHOTS / "flow-report-charts-dark.png"))


def test_a_report_chart_over_no_data_says_so(page: Page, live_server: LiveServer) -> None:
    west = Cluster.objects.create(alias="us-west", bootstrap_servers="10.255.0.1:9092")
    east = Cluster.objects.create(alias="us-east", bootstrap_servers="10.255.0.2:9092")
    flow = Flow.objects.create(source=west, target=east, topics=["orders"], enabled=False)
    other = [{"flow": "us-east->backup", "window_start": _at(0), "complete": 5, "missing": 0, "duplicates": 0}]
    _summary({"job": "audit", "source_records": 5, "missing": 0, "series": other})
    note = "no data: no facts in the lake for this window"
    _summary({"job": "latency", "facts": 0, "no_data": True, "note": note, "series": []})
    _summary({"job": "topology", "heartbeat_arrivals": 0, "no_data": True, "nodes": [], "links": []})

    make_user("viewer-no-data", "viewer")
    log_in(page, live_server.url, "viewer-no-data")
    page.goto(f"{live_server.url}/flows/{flow.pk}/")
    expect(page.locator("#reports .report")).to_have_count(3)
    for job in ("audit", "latency", "topology"):
        chart = f"#reports [data-job={job}] [data-chart={job}]"
        expect(page.locator(f"{chart} .annotation-text")).to_have_text(["no data"])
        assert _plotted(page, chart) == []
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.locator("#reports").screenshot(path=str(SCREENSHOTS / "flow-report-charts-no-data.png"))
