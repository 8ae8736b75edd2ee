"""The flow page lists the partitions of a task no worker has room for, marked unplaced, with their lag from the
stored positions; the dashboard's tiles give the records/s entering replication and copied, each labelled."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from controlplane.monitoring.services import sampling
from controlplane.monitoring.services.observe import observe_flow
from controlplane.orchestration.choices import TaskState
from controlplane.orchestration.models import TaskAssignment
from tests.browser.conftest import log_in, make_user, shoot
from tests.controlplane.monitoring.test_every_partition_counted import store_positions
from tests.controlplane.monitoring.test_rates import TICK, Task, make_flow
from tests.support.kafka import create_topic, end_offsets, unique_topic
from tests.support.replication import produce_known

pytestmark = [pytest.mark.kafka, pytest.mark.django_db(transaction=True)]


def test_the_flow_page_lists_an_unplaced_tasks_partitions_with_their_lag(
    page: Page, live_server: LiveServer, kafka_clusters: dict[str, str]
) -> None:
    west, east = kafka_clusters["us-west"], kafka_clusters["us-east"]
    topic = unique_topic("unplaced-page")
    create_topic(west, topic, partitions=3)
    produce_known(west, topic, 3, 18_000)
    source = Cluster.objects.create(alias="us-west", bootstrap_servers=west)
    target = Cluster.objects.create(alias="us-east", bootstrap_servers=east)
    flow = Flow.objects.create(source=source, target=target, topics=[topic], tasks_max=2)
    running = Task(flow, 0)
    running.start()
    running.copy(topic, 0, 5997, 5997)
    running.registry.set_lag(flow.name, topic, 0, 3)
    running.report()
    TaskAssignment.objects.filter(flow=flow, task_id=0).update(partitions=[[topic, 0]])
    TaskAssignment.objects.create(
        flow=flow,
        task_id=1,
        partitions=[[topic, 1], [topic, 2]],
        state=TaskState.PENDING,
        unplaced_reason="needs 1 slot, 0 free on 1 worker (2 slots: 2 running, 0 starting)",
    )
    store_positions(east, "us-west", {(topic, 1): 400})
    observe_flow(flow, timezone.now())
    ends = end_offsets(west, topic, range(3))
    make_user("vera", "viewer")
    log_in(page, live_server.url, "vera")

    page.goto(f"{live_server.url}/flows/{flow.pk}/")
    rows = page.locator("#partitions tr[data-topic]")
    expect(rows).to_have_count(3)
    expect(rows.nth(1)).to_contain_text("UNPLACED")
    expect(rows.nth(1)).to_contain_text(f"{ends[1] - 400:,}")
    expect(rows.nth(2)).to_contain_text(f"{ends[2]:,}")
    expect(page.locator('[data-tile="lag"] .value')).not_to_have_text("3")
    page.locator("#partitions").scroll_into_view_if_needed()
    shoot(page, "flow-unplaced-partitions")


def test_the_dashboard_tiles_say_entering_and_copied(page: Page, live_server: LiveServer) -> None:
    first = Task(make_flow("us-west", "us-east", ["orders"]), 0)
    second = Task(make_flow("us-east", "backup", ["us-west.orders"]), 0)
    first.start()
    second.start()
    steps = 20
    start = timezone.now() - timedelta(seconds=TICK * steps)
    for step in range(1, steps + 1):
        first.copy("orders", 0, 40 * TICK * step, 40 * TICK)
        second.copy("us-west.orders", 0, 40 * TICK * step - 40, 40 * TICK)
        first.report()
        second.report()
        sampling.sample_flows(start + timedelta(seconds=TICK * step))
    make_user("vera", "viewer")
    log_in(page, live_server.url, "vera")

    entering, copied = page.locator('[data-tile="entering"]'), page.locator('[data-tile="copied"]')
    expect(entering.locator(".label")).to_have_text("Entering replication / s")
    expect(entering.locator(".value")).to_have_text("40")
    expect(entering.locator(".sub")).to_have_text("us-west 40")
    expect(copied.locator(".label")).to_have_text("Copied / s")
    expect(copied.locator(".value")).to_have_text("80")
    shoot(page, "dashboard-rate-tiles")
