"""After a failover moved the demo's group to us-east, resuming the demo's paused traffic warns first, naming the
cluster it would restart on, in full on the wizard's last panel and in short on the dashboard; the resume asks once more
with the whole warning and goes through only when accepted. No brokers: the generator is a status file, the failover
a completed row."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import Dialog, Page, expect
from pytest_django.live_server_helper import LiveServer

from controlplane.clusters.models import Cluster
from controlplane.failover.models import Failover
from controlplane.failover.results import CheckpointResult, FailbackResult, StepEntry, VerifyResult
from localkafka.traffic import TrafficControl
from tests.browser.conftest import log_in, make_user, shoot
from tests.browser.wizard import at_step

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def paused_demo(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> TrafficControl:
    """A demo's generator, paused, as the live server sees it (its status file names this process, so it "runs")."""
    control = TrafficControl(tmp_path / "demo-traffic")
    monkeypatch.setattr("controlplane.demo.services.traffic.control", lambda: control)
    control.publish({"pid": os.getpid(), "rate": 20.0, "topics": ["orders"], "paused": True, "group": "billing"})
    control.request(True)
    return control


def completed_failover() -> Failover:
    """billing moved from us-west to us-east, every step done (what the wizard's last panel reads)."""
    west, east = (
        Cluster.objects.create(alias=a, bootstrap_servers=f"127.0.0.1:{n}")
        for n, a in enumerate(["us-west", "us-east"], 1)
    )
    steps = {
        "checkpoint": StepEntry(CheckpointResult(), complete=True).as_json(),
        "verify": StepEntry(
            VerifyResult(checklist=("Start billing's consumers on us-east.",)), complete=True
        ).as_json(),
        "failback": StepEntry(FailbackResult(skipped=True), complete=True).as_json(),
    }
    return Failover.objects.create(
        mode="planned", source=west, target=east, groups=["billing"], status="completed", step="failback", steps=steps
    )


def test_resuming_the_demo_after_its_group_moved_warns_naming_the_cluster_first(
    page: Page, live_server: LiveServer, paused_demo: TrafficControl
) -> None:
    failover = completed_failover()
    make_user("olga", "operator")
    log_in(page, live_server.url, "olga")

    page.goto(f"{live_server.url}/failover/{failover.pk}/")
    at_step(page, "done", timeout=30_000)
    box = page.locator("#panel #wizard-demo-traffic")
    warning = box.locator(".demo-traffic-moved")
    expect(warning).to_contain_text(f"billing was failed over to us-east (failover {failover.pk})")
    expect(warning).to_contain_text("restarts the demo's producers and billing on us-west")
    expect(box.locator("#demo-traffic-toggle")).to_have_text("Resume on us-west anyway")
    shoot(page, "demo-resume-1-wizard-done-warns")

    page.goto(f"{live_server.url}/", wait_until="domcontentloaded")
    header = page.locator("#demo-traffic")
    short = header.locator(".demo-traffic-moved")
    expect(short).to_have_text("billing now reads on us-east")
    expect(short).to_have_attribute("title", re.compile("restarts the demo's producers and billing on us-west"))
    shoot(page, "demo-resume-2-dashboard-warns")
    asked: list[str] = []

    def answer(dialog: Dialog, accept: bool) -> None:
        asked.append(dialog.message)
        dialog.accept() if accept else dialog.dismiss()

    page.once("dialog", lambda dialog: answer(dialog, False))
    header.locator("#demo-traffic-toggle").click()
    page.wait_for_timeout(1000)  # a declined resume sends nothing
    assert paused_demo.requested_paused() is True, "nothing resumed when the warning was declined"
    page.once("dialog", lambda dialog: answer(dialog, True))
    header.locator("#demo-traffic-toggle").click()
    expect(header).to_contain_text("(switching…)", timeout=10_000)  # asked; this generator is a file that never acts
    assert paused_demo.requested_paused() is False
    assert len(asked) == 2 and "billing was failed over to us-east" in asked[0]
    assert asked[0].endswith("Resume on us-west anyway?")
