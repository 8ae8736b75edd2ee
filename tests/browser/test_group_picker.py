"""The failover plan's group picker lists a group that consumed on the source (with its lag), not one of an
unrelated topic; the operator picks it, the failover runs from it, and the verify result stays on the later steps."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from controlplane.failover.choices import Status
from controlplane.failover.models import Failover
from controlplane.flows.services import cluster_config
from controlplane.monitoring.services.readers import newest_heartbeat
from tests.browser.conftest import log_in, make_user, shoot
from tests.browser.wizard import at_step, checkpoint_to_apply, failover_setup, fence, healthy, preflight, start
from tests.support.celery import Processes
from tests.support.failover import committed, consume_and_commit
from tests.support.kafka import create_topic, end_offsets, topic_partitions, wait_until
from tests.support.replication import produce_known

pytestmark = [pytest.mark.kafka, pytest.mark.django_db(transaction=True)]
PARTITIONS, RECORDS = 2, 200


def test_the_picker_lists_the_group_and_the_failover_runs_from_it(
    page: Page,
    live_server: LiveServer,
    kafka_clusters: dict[str, str],
    celery_env: dict[str, str],
    celery_processes: Processes,
    tmp_path: Path,
) -> None:
    setup = failover_setup("pick", kafka_clusters, celery_env, celery_processes, tmp_path, PARTITIONS, RECORDS)
    topic, group, clusters, flow = setup.topic, setup.group, setup.clusters, setup.flow
    west, east = kafka_clusters["us-west"], kafka_clusters["us-east"]
    unrelated = f"{topic}-unrelated-x"  # not the flow's topic, and its group passes the flow's groups filter
    create_topic(west, unrelated, partitions=1)
    produce_known(west, unrelated, 1, 10)
    consume_and_commit(west, f"{group}-other", unrelated, 10)
    consume_and_commit(west, group, topic, RECORDS * 3 // 4)
    before = committed(west, group, topic, PARTITIONS)
    lag = RECORDS - sum(before.values())
    assert lag > 0 and all(offset > 0 for offset in before.values()), before
    remote = f"us-west.{topic}"
    wait_until(lambda: topic_partitions(east, remote) == PARTITIONS, timeout=60, interval=0.5, what=remote)
    copied = {p: RECORDS // PARTITIONS for p in range(PARTITIONS)}
    wait_until(
        lambda: healthy(flow) and end_offsets(east, remote, range(PARTITIONS)) == copied,
        timeout=60,
        interval=0.5,
        what="a healthy flow that copied every record",
    )
    target = cluster_config(clusters["us-east"])  # pre-flight blocks until a heartbeat made it to the target
    wait_until(lambda: newest_heartbeat(target, "us-west.heartbeats"), timeout=30, interval=0.5, what="a heartbeat")
    make_user("olga", "operator")
    log_in(page, live_server.url, "olga")

    page.goto(f"{live_server.url}/failover/")
    page.select_option("#f-source", "us-west")
    page.select_option("#f-target", "us-east")
    row = page.locator(f"#picker-list tr[data-row='{group}']")
    expect(row).to_be_visible(timeout=30_000)
    expect(row.locator(f"td[data-lag='{group}']")).to_have_text(f"{lag:,}")
    expect(page.locator(f"#picker-list tr[data-row='{group}-other']")).to_have_count(0)
    # Groups of other tests may have consumed on the shared brokers' heartbeats topic, which every flow replicates:
    # only this test's own groups are counted.
    expect(page.locator(f"#picker-list tbody tr[data-row^='{group}']")).to_have_count(1)
    row.locator("input[type=checkbox]").check()
    expect(page.locator("#f-groups")).to_have_value(group)
    shoot(page, "group-picker-1-plan")
    page.fill("#picker-search", "no-such-group-anywhere")
    expect(page.locator("#picker-list .alert")).to_contain_text("No consumer group whose id contains")
    page.fill("#picker-search", group)
    expect(row).to_be_visible(timeout=30_000)
    expect(row.locator("input[type=checkbox]")).to_be_checked()  # picked stays picked after a new search

    start(page)
    preflight(page, "group-picker-2-preflight")
    at_step(page, "fence")  # through drain: nothing lags
    fence(page)
    checkpoint_to_apply(page)
    page.get_by_role("button", name="Write the offsets to us-east").click()
    at_step(page, "verify")
    page.get_by_role("button", name="Read back the offsets").click()
    at_step(page, "failback")
    summary = f"Verify: {PARTITIONS} of {PARTITIONS} partitions committed on us-east as written."
    expect(page.locator("#verify-summary")).to_have_text(summary)
    shoot(page, "group-picker-3-failback")
    page.get_by_role("button", name="Skip").click()
    at_step(page, "done")
    expect(page.locator("#verify-summary")).to_have_text(summary)
    shoot(page, "group-picker-4-done")

    failover = Failover.objects.get()
    assert (failover.groups, failover.status, failover.dry_run) == ([group], Status.COMPLETED, False)
    assert committed(east, group, remote, PARTITIONS) == before  # copied from offset 0: the same positions
