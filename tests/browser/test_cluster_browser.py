"""The cluster browser page on real brokers: from the clusters list to a topic's partitions and a group's lag, each
matching what the brokers hold, and an unreachable cluster's error instead of an empty table."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from controlplane.clusters.models import Cluster
from tests.browser.conftest import log_in, make_user, shoot
from tests.support.browse import Browsed, seed
from tests.support.kafka import create_topic

pytestmark = [pytest.mark.kafka, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def browsed(kafka_clusters: dict[str, str]) -> Iterator[Browsed]:
    seeded = seed(kafka_clusters)
    try:
        yield seeded
    finally:
        seeded.member.close()


def cells(page: Page, row: str) -> list[str]:
    return [text.strip() for text in page.locator(f"{row} td").all_inner_texts()]


def test_a_viewer_browses_a_topics_partitions_and_a_groups_lag_as_the_brokers_hold_them(
    page: Page, live_server: LiveServer, browsed: Browsed
) -> None:
    make_user("vera", "viewer")
    log_in(page, live_server.url, "vera")
    page.goto(f"{live_server.url}/clusters/")
    page.locator("tr", has_text=browsed.source.alias).get_by_role("link", name="Topics and groups").click()
    page.wait_for_url(f"**/clusters/{browsed.source.pk}/browse/")

    page.fill("#browse-search", browsed.topic)
    expect(page.locator("#browse-range")).to_have_text("1\u20131 of 1")
    row = f'tr[data-topic="{browsed.topic}"]'
    expect(page.locator(row)).to_be_visible()
    assert cells(page, row)[1:5] == ["3", "1", "12", "10"]
    expect(page.locator(row).get_by_role("link", name=browsed.flow.name)).to_be_visible()
    shoot(page, "cluster-browser-topics")

    page.locator(row).get_by_role("link", name=browsed.topic).click()
    expect(page.locator("#topic-partitions tbody tr")).to_have_count(3)
    offsets = [cells(page, f'#topic-partitions tr[data-partition="{p}"]')[4:7] for p in range(3)]
    assert offsets == [["2", "5", "3"], ["0", "0", "0"], ["0", "7", "7"]]
    expect(page.locator("#topic-configs")).to_contain_text("retention.ms")
    shoot(page, "cluster-browser-topic")

    page.get_by_role("link", name="Consumer groups").click()
    page.fill("#browse-search", browsed.group)
    expect(page.locator("#browse-range")).to_have_text("1\u20131 of 1")
    page.locator(f'tr[data-group="{browsed.group}"]').get_by_role("link", name=browsed.group).click()
    expect(page.locator("#group-offsets tbody tr")).to_have_count(3)
    lag = {p: cells(page, f'#group-offsets tr[data-partition="{browsed.topic}-{p}"]')[1:4] for p in range(3)}
    assert lag == {0: ["3", "5", "2"], 1: ["nothing committed", "0", "\u2013"], 2: ["7", "7", "0"]}
    expect(page.locator("#group-members")).to_contain_text("browse-test")
    shoot(page, "cluster-browser-group")


def test_the_remote_topics_tab_names_where_each_came_from_and_the_flow_writing_it(
    page: Page, live_server: LiveServer, browsed: Browsed
) -> None:
    near, topic = browsed.source.alias, browsed.topic
    for name in (f"{near}.{topic}", f"{near}.heartbeats"):
        create_topic(browsed.target.bootstrap_servers, name)
    make_user("vera", "viewer")
    log_in(page, live_server.url, "vera")
    page.goto(f"{live_server.url}/clusters/{browsed.target.pk}/browse/#remote-topics")
    page.fill("#browse-search", near)
    expect(page.locator("#browse-range")).to_have_text("1\u20132 of 2")
    row = page.locator(f'tr[data-topic="{near}.{topic}"]')
    expect(row).to_be_visible()
    assert cells(page, f'tr[data-topic="{near}.{topic}"]')[1:3] == [near, topic]
    expect(row.get_by_role("link", name=browsed.flow.name)).to_be_visible()
    expect(page.locator("#upstream")).to_contain_text(near)
    shoot(page, "cluster-browser-remote-topics")


def test_an_unreachable_cluster_shows_the_brokers_error_not_an_empty_table(page: Page, live_server: LiveServer) -> None:
    cluster = Cluster.objects.create(alias="gone", bootstrap_servers="127.0.0.1:1")
    make_user("vera", "viewer")
    log_in(page, live_server.url, "vera")
    page.goto(f"{live_server.url}/clusters/{cluster.pk}/browse/#groups")
    error = page.locator("#browse-list .alert.error")
    expect(error).to_contain_text("gone: ", timeout=20_000)
    expect(error).to_contain_text("127.0.0.1:1")
    expect(page.locator("#browse-list table")).to_have_count(0)
