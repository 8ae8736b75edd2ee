"""A whole planned failover in the browser against `manage.py demo` itself.

The demo runs on its own defaults (SQLite, the embedded Celery transport, one worker, its own three clusters and
traffic generator). A consumer group reads `orders` on us-west live while the wizard plans, checks and drains;
the operator pauses the demo's traffic with the dashboard's control before the fence; after the failover the
group reads on us-east exactly what it had not read on us-west: 0 re-read and 0 skipped, record by record.
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaException, TopicPartition
from playwright.sync_api import Page, expect

from tests.browser.conftest import shoot
from tests.browser.demo import Demo, log_in_as_admin, running_demo
from tests.browser.wizard import STEP_TIMEOUT, apply_verify_failback, at_step, checkpoint_to_apply, fence, plan, start
from tests.support.failover import Values, committed, exactness, read_rest, values_from
from tests.support.kafka import end_offsets, wait_until

pytestmark = [pytest.mark.kafka]
TOPIC, PARTITIONS = "orders", 4


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Demo]:
    with running_demo(tmp_path_factory.mktemp("demo-state")) as running:
        yield running


class LiveGroup:
    """A consumer group member that reads and commits on the source until stopped: the group is live (Stable,
    with a member and moving offsets) while the wizard plans, checks and drains."""

    def __init__(self, bootstrap: str, group: str, topic: str) -> None:
        self.consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": group,
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "session.timeout.ms": 6000,
            }
        )
        self.consumer.subscribe([topic])
        self.values: Values = {}
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name=f"live-{group}")

    def __enter__(self) -> LiveGroup:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    def read(self) -> int:
        return sum(map(len, self.values.values()))

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                msgs = self.consumer.consume(200, 0.5)
                for msg in msgs:
                    if msg.error():
                        raise KafkaException(msg.error())
                    self.values.setdefault(msg.partition() or 0, []).append(msg.value() or b"")
                if msgs:
                    self.consumer.commit(asynchronous=False)
        except BaseException as exc:  # reported by the test, never swallowed
            self.error = exc

    def stop(self) -> None:
        """Leave the group; everything read is committed (a commit follows every batch read)."""
        if self._thread.is_alive():
            self._stop.set()
            self._thread.join(30)
            self.consumer.close()
        assert self.error is None, f"the live consumer failed: {self.error}"


def _api(page: Page, base: str, path: str) -> Any:
    response = page.request.get(f"{base}{path}")
    assert response.ok, f"GET {path}: {response.status} {response.text()[:500]}"
    return response.json()


def _healthy(page: Page, base: str, source: str, target: str) -> bool:
    edges = _api(page, base, "/api/v1/dashboard/")["edges"]
    return any(e["source"] == source and e["target"] == target and e["health"] == "healthy" for e in edges)


def _pause_traffic(page: Page, base: str, west: str) -> None:
    """Through the dashboard's control, as an operator would; then the source's end offsets must stand still."""
    control = page.context.new_page()
    control.goto(f"{base}/", wait_until="domcontentloaded", timeout=60_000)  # the control needs no chart
    control.locator("#demo-traffic-toggle").click(timeout=60_000)
    expect(control.locator("#demo-traffic")).to_contain_text("paused", timeout=30_000)
    shoot(control, "demo-failover-traffic-paused")
    control.close()
    state = _api(page, base, "/api/v1/demo/traffic/")
    assert state["paused"] is True, state

    def still() -> bool:
        before = end_offsets(west, TOPIC, range(PARTITIONS))
        page.wait_for_timeout(1500)
        return end_offsets(west, TOPIC, range(PARTITIONS)) == before

    wait_until(still, timeout=30, what="the demo's traffic to stop writing to us-west")


def _preflight_until_it_passes(page: Page, timeout: float = 120.0) -> None:
    """As an operator would: on a demo that started a minute ago a check may block (heartbeats not replicated
    yet); the wizard says so, and running the checks again a little later passes."""
    page.get_by_role("button", name="Run pre-flight checks").click()
    deadline = time.monotonic() + timeout
    while True:
        expect(page.locator(".pfcheck").first).to_be_visible(timeout=STEP_TIMEOUT)
        expect(page.locator("#panel .jobstate")).to_have_count(0, timeout=STEP_TIMEOUT)
        if page.get_by_role("button", name="Continue").count():
            break
        assert time.monotonic() < deadline, "pre-flight still blocked: " + page.locator("#panel").inner_text()
        page.wait_for_timeout(3000)
        page.get_by_role("button", name="Run the checks again").click()
    shoot(page, "demo-failover-2-preflight")
    for box in page.locator("input[name=ack]").all():
        box.check()
    page.get_by_role("button", name="Continue").click()


def test_a_planned_failover_on_the_demos_own_defaults_is_exact(page: Page, demo: Demo) -> None:
    base, west, east = demo.url, demo.bootstraps["us-west"], demo.bootstraps["us-east"]
    group = f"demo-billing-{uuid.uuid4().hex[:6]}"
    log_in_as_admin(page, base)
    wait_until(
        lambda: _healthy(page, base, "us-west", "us-east"),
        timeout=180,
        interval=2,
        what="the demo's us-west->us-east flow healthy",
    )
    shoot(page, "demo-failover-0-dashboard")

    with LiveGroup(west, group, TOPIC) as live:
        wait_until(lambda: live.read() >= 200, timeout=60, what="the live group reading orders")
        plan(page, base, group, "us-west", "us-east", "planned", 1000)
        shoot(page, "demo-failover-1-plan")
        start(page)
        _preflight_until_it_passes(page)
        at_step(page, "drain")
        shoot(page, "demo-failover-3-drain")
        at_step(page, "fence")
    already = live.values  # the group stopped: everything it read is committed on us-west

    _pause_traffic(page, base, west)
    positions = committed(west, group, TOPIC, PARTITIONS)
    fence(page)
    shoot(page, "demo-failover-4-fence")
    checkpoint_to_apply(page)
    shoot(page, "demo-failover-5-checkpoint")
    apply_verify_failback(page, "us-east", "demo-failover", set_up=False)

    rest = values_from(west, TOPIC, positions)
    result = exactness(already, rest, read_rest(east, group, f"us-west.{TOPIC}", PARTITIONS))
    assert (result.reread, result.skipped, result.in_order) == (0, 0, True), result
    assert result.expected > 0, "records produced after the group stopped must be read on us-east"
    assert sum(map(len, already.values())) >= 200


def test_the_demo_ran_on_sqlite_and_the_embedded_transport(demo: Demo) -> None:
    """What the failover above ran on: the demo's own SQLite file and Celery spool (its worker ran the wizard's
    step jobs), not the test run's Postgres and Redis; and SQLite never refused a write."""
    assert (demo.state_dir / "db.sqlite3").stat().st_size > 0
    assert (demo.state_dir / "celery" / "queue").is_dir()
    output = demo.output()
    # Step jobs reach the worker only through the spool, and only the worker runs them: their results are stored
    # with the failover in the demo's own database.
    with contextlib.closing(sqlite3.connect(demo.state_dir / "db.sqlite3")) as db:
        rows = db.execute("SELECT steps, job_finished_at FROM failover_failover").fetchall()
    steps_run = [step for steps, finished in rows if finished is not None for step in json.loads(steps)]
    assert len(steps_run) >= 7, f"the worker did not run the wizard's step jobs: {rows}"
    assert "database is locked" not in output
    assert "redis://" not in output and "postgres://" not in output


def test_a_new_user_finds_the_operators_console_from_the_navigation(page: Page, demo: Demo) -> None:
    """On the demo's own SQLite and embedded transport, each console page is reached from the navigation and
    answers with the brokers' figures: alert rules, targets and silences; the audit log; the flow page's time range
    and export; a record of orders beside its copy; broker health; a consumer group's offset reset preview."""
    group = f"walk-{uuid.uuid4().hex[:6]}"
    committer = Consumer({"bootstrap.servers": demo.bootstraps["us-west"], "group.id": group})
    try:
        committer.commit(offsets=[TopicPartition(TOPIC, p, 1) for p in range(PARTITIONS)], asynchronous=False)
    finally:
        committer.close()
    log_in_as_admin(page, demo.url)

    page.get_by_role("link", name="Notifications").click()
    for form in ("#rule-form", "#target-form", "#silence-form"):
        expect(page.locator(form)).to_be_visible()
    expect(page.locator("#rule-list")).not_to_contain_text("Loading")

    page.get_by_role("link", name="Audit log").click()
    expect(page.locator("#audit-filters")).to_be_visible()

    page.get_by_role("link", name="Flows", exact=True).click()
    page.get_by_role("link", name=re.compile(r"^us-west\s*(→|->)\s*us-east$")).first.click()
    expect(page.locator("#chart-range-select")).to_have_value("30")
    expect(page.locator("#export-mm2")).to_be_visible()
    page.get_by_role("link", name="Records").click()
    page.select_option("#records-topic", TOPIC)
    page.fill("#records-offset", "0")
    page.fill("#records-limit", "1")
    page.get_by_role("button", name="Read").click()
    row = page.locator("tr[data-offset='0']")
    expect(row.locator("td[data-side=target][data-field=value] pre")).to_be_visible(timeout=30_000)
    source = row.locator("td[data-side=source][data-field=value] pre").inner_text()
    assert source and row.locator("td[data-side=target][data-field=value] pre").inner_text() == source

    page.get_by_role("link", name="Clusters", exact=True).click()
    page.get_by_role("link", name="us-west", exact=True).first.click()
    panel = page.locator("#broker-health")
    expect(panel.locator('[data-figure="brokers_up"] .value')).to_have_text("1", timeout=60_000)
    page.get_by_role("link", name="Browse topics and groups").click()
    page.goto(f"{page.url.split('#')[0]}#group/{group}")
    expect(page.locator("#group-offsets tbody tr")).to_have_count(PARTITIONS, timeout=30_000)
    page.get_by_role("button", name="Reset offsets").click()
    page.select_option("#reset-to", "earliest")
    page.get_by_role("button", name="Preview").click()
    expect(page.locator("#reset-totals")).to_have_text(f"{PARTITIONS} records read again, 0 records skipped.")
    shoot(page, "demo-console-walk")
