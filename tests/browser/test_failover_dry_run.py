"""A planned failover run as a dry run through every step of the wizard: the page says nothing was changed, and
nothing was: the group has no committed offsets on the target and no flow back was created."""

from __future__ import annotations

from pathlib import Path

import pytest
from confluent_kafka import ConsumerGroupTopicPartitions
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from controlplane.failover.choices import Status
from controlplane.failover.models import Failover
from controlplane.failover.results import ApplyResult
from controlplane.flows.models import Flow
from controlplane.flows.services import cluster_config
from controlplane.monitoring.services.readers import newest_heartbeat
from tests.browser.conftest import log_in, make_user, shoot
from tests.browser.wizard import (
    at_step,
    checkpoint_to_apply,
    failover_setup,
    fence,
    healthy,
    plan,
    preflight,
    start,
)
from tests.support.celery import Processes
from tests.support.failover import committed, consume_and_commit
from tests.support.kafka import admin, end_offsets, topic_partitions, wait_until

pytestmark = [pytest.mark.kafka, pytest.mark.django_db(transaction=True)]
PARTITIONS, RECORDS = 2, 200


def group_offsets(bootstrap: str, group: str) -> list[object]:
    """Every offset the group committed on the cluster, whatever the topic."""
    client = admin(bootstrap)  # keep the handle alive until the future resolves
    result = client.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group].result(timeout=30)
    return list(result.topic_partitions or [])


def test_a_dry_run_goes_through_every_step_and_changes_nothing(
    page: Page,
    live_server: LiveServer,
    kafka_clusters: dict[str, str],
    celery_env: dict[str, str],
    celery_processes: Processes,
    tmp_path: Path,
) -> None:
    # RECORDS per partition and no more: the producers have stopped
    setup = failover_setup("dry", kafka_clusters, celery_env, celery_processes, tmp_path, PARTITIONS, RECORDS)
    topic, group, clusters, flow = setup.topic, setup.group, setup.clusters, setup.flow
    west, east = kafka_clusters["us-west"], kafka_clusters["us-east"]
    consume_and_commit(west, group, topic, RECORDS * 3 // 4)  # a position in every partition
    remote = f"us-west.{topic}"
    copied = {p: RECORDS // PARTITIONS for p in range(PARTITIONS)}
    wait_until(lambda: topic_partitions(east, remote) == PARTITIONS, timeout=60, interval=0.5, what=remote)
    wait_until(
        lambda: healthy(flow) and end_offsets(east, remote, range(PARTITIONS)) == copied,
        timeout=60,
        interval=0.5,
        what="a healthy flow that copied every record",
    )
    target = cluster_config(clusters["us-east"])  # pre-flight blocks until a heartbeat made it to the target
    wait_until(lambda: newest_heartbeat(target, "us-west.heartbeats"), timeout=30, interval=0.5, what="a heartbeat")
    before = committed(west, group, topic, PARTITIONS)
    assert all(offset > 0 for offset in before.values()), before
    make_user("olga", "operator")
    log_in(page, live_server.url, "olga")

    plan(page, live_server.url, group, "us-west", "us-east", "planned", 0)
    page.check("input[name=dry_run]")
    start(page)
    expect(page.locator("#wizard-status")).to_contain_text("dry run")
    preflight(page, "failover-dry-run-preflight")
    at_step(page, "fence")  # through drain: nothing lags
    fence(page)
    checkpoint_to_apply(page)
    expect(page.locator("#totals")).to_have_text("0 / 0")
    page.get_by_role("button", name="Simulate the write (dry run)").click()
    at_step(page, "verify")
    page.get_by_role("button", name="Read back the offsets").click()
    at_step(page, "failback")
    page.get_by_role("button", name="Set up the flow back").click()
    at_step(page, "done")
    expect(page.locator("#panel .alert.ok")).to_have_text(
        f"Dry run complete: nothing was changed. {group} would resume on us-east."
    )
    expect(page.locator("#panel dd").filter(has_text="us-east->us-west")).to_have_text(
        "us-east->us-west (not created: dry run)"
    )
    rows = page.locator("#panel table tbody tr")
    expect(rows).to_have_count(PARTITIONS)
    for row in rows.all():
        expect(row.locator("td").nth(3)).to_have_text("\u2013")  # committed on target: none (an en dash)
        expect(row.locator("td").nth(4)).to_have_text("not written: dry run")
    shoot(page, "failover-dry-run-done")

    failover = Failover.objects.get()
    assert (failover.dry_run, failover.status) == (True, Status.COMPLETED)
    assert failover.result(ApplyResult).would_write, "the dry run showed what it would write"
    assert group_offsets(east, group) == [], "the dry run committed offsets on the target"
    assert list(Flow.objects.values_list("source__alias", "target__alias")) == [("us-west", "us-east")]
    assert committed(west, group, topic, PARTITIONS) == before
