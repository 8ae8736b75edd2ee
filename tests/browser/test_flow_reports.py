"""The flow page's latest analytics reports: a report's rows about the flow are a table with its columns (they were
raw JSON lines), its whole-lake figures say they cover all flows, and a report without a row about the flow says so
instead of implying the flow was checked.

Screenshot: ``artifacts/screenshots/flow-reports.png`` at 1280x800."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from tests.browser.conftest import log_in, make_user, shoot

pytestmark = pytest.mark.django_db(transaction=True)


def _summary(root: Path, run: str, summary: dict[str, object]) -> None:
    out = root / "analytics" / run
    out.mkdir(parents=True)
    (out / "summary.json").write_text(json.dumps(summary))


def test_a_reports_rows_about_the_flow_are_a_table_and_whole_lake_figures_say_so(
    page: Page, live_server: LiveServer, settings: Any, tmp_path: Path
) -> None:
    settings.STATE_DIR = str(tmp_path)
    west = Cluster.objects.create(alias="us-west", bootstrap_servers="10.255.0.1:9092")
    east = Cluster.objects.create(alias="us-east", bootstrap_servers="10.255.0.2:9092")
    flow = Flow.objects.create(source=west, target=east, topics=["orders"], enabled=False)
    mine = {"flow": flow.name, "facts": 2423, "replication_latency_ms_p50": 33, "replication_latency_ms_p99": 1453}
    other = {"flow": "us-east->backup", "facts": 7, "replication_latency_ms_p50": 5, "replication_latency_ms_p99": 9}
    _summary(tmp_path, "latency-1", {"job": "latency", "facts": 4628, "records": 5804, "flows": [mine, other]})
    _summary(tmp_path, "audit-1", {"job": "audit", "source_records": 5804, "missing": 0, "completeness_pct": 100.0})

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
