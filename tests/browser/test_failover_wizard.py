"""Acceptance 3 and 4: a planned failover through the wizard, reloaded mid-way, moves a consumer group that is
mid-stream on the source to the target with 0 records re-read and 0 skipped, checked record by record. The step log
shows the pre-flight complete as soon as every check passes, before Continue."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from controlplane.flows.models import Flow
from tests.browser.conftest import log_in, make_user, shoot
from tests.browser.traffic import Traffic
from tests.browser.wizard import (
    STEP_TIMEOUT,
    apply_verify_failback,
    at_step,
    checkpoint_to_apply,
    failover_setup,
    fence,
    healthy,
    plan,
    start,
)
from tests.support.celery import Processes
from tests.support.failover import committed, consume_and_commit, exactness, read_rest, values_from
from tests.support.kafka import wait_until

pytestmark = [pytest.mark.kafka, pytest.mark.django_db(transaction=True)]
PARTITIONS = 2


def checks_pass_before_continue(page: Page) -> None:
    """Run the checks, acknowledge every warning and run them again: every check passes, and the step log says the
    pre-flight is complete while the wizard still waits for Continue."""
    page.get_by_role("button", name="Run pre-flight checks").click()
    expect(page.locator(".pfcheck").first).to_be_visible(timeout=STEP_TIMEOUT)
    expect(page.locator("#panel .jobstate")).to_have_count(0, timeout=STEP_TIMEOUT)
    for box in page.locator("input[name=ack]").all():
        box.check()
    page.get_by_role("button", name="Run the checks again").click()
    expect(page.locator("#panel .jobstate")).to_have_count(0, timeout=STEP_TIMEOUT)
    expect(page.locator("#panel .alert.ok")).to_have_text("Every check passed.", timeout=STEP_TIMEOUT)
    summary = page.locator("#log summary", has_text="preflight")
    expect(summary).to_contain_text("· complete")
    expect(summary).not_to_contain_text("not complete")
    expect(page.locator("#panel h2[data-current=preflight]")).to_be_visible()  # Continue still moves on
    shoot(page, "wizard-2-preflight")


def test_a_planned_failover_through_the_wizard_is_exact_and_survives_a_reload(
    page: Page,
    live_server: LiveServer,
    kafka_clusters: dict[str, str],
    celery_env: dict[str, str],
    celery_processes: Processes,
    tmp_path: Path,
) -> None:
    setup = failover_setup("wiz", kafka_clusters, celery_env, celery_processes, tmp_path, PARTITIONS)
    topic, group, flow = setup.topic, setup.group, setup.flow
    west, east = kafka_clusters["us-west"], kafka_clusters["us-east"]
    make_user("olga", "operator")
    log_in(page, live_server.url, "olga")

    with Traffic(west, topic, PARTITIONS, rate=300) as traffic:
        wait_until(lambda: traffic.sent > 1500 and healthy(flow), timeout=120, what="records and a healthy flow")
        already = consume_and_commit(west, group, topic, 1000)  # mid-stream: the producers keep writing
        plan(page, live_server.url, group, "us-west", "us-east", "planned", 2000)
        shoot(page, "wizard-1-plan")
        start(page)
        checks_pass_before_continue(page)
        page.get_by_role("button", name="Continue").click()
        at_step(page, "drain")
        shoot(page, "wizard-3-drain")
        at_step(page, "fence")
    positions = committed(west, group, topic, PARTITIONS)

    page.reload()  # acceptance 4: the wizard resumes at the same step
    at_step(page, "fence")
    expect(page.locator("#stepper li.current")).to_have_attribute("data-step", "fence")
    fence(page)
    shoot(page, "wizard-4-fence")
    checkpoint_to_apply(page)
    expect(page.locator("#totals")).to_have_text("0 / 0")
    shoot(page, "wizard-5-checkpoint-preview")
    apply_verify_failback(page, "us-east", "wizard")
    assert Flow.objects.filter(source__alias="us-east", target__alias="us-west").exists()

    rest = values_from(west, topic, positions)
    result = exactness(already, rest, read_rest(east, group, f"us-west.{topic}", PARTITIONS))
    assert (result.reread, result.skipped, result.in_order) == (0, 0, True)
    assert result.expected > 0
