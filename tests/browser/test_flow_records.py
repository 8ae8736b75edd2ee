"""The Records page on real brokers: from the flow page to a record's value on the source and on the target side by
side, at the offsets the offset syncs give, and a copy found on the target from its row."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from tests.browser.conftest import log_in, make_user, shoot
from tests.support.records import SHIFT, replicated_flow

pytestmark = [pytest.mark.kafka, pytest.mark.django_db(transaction=True)]


def test_an_operator_reads_a_records_value_on_the_source_and_on_the_target(
    page: Page, live_server: LiveServer, kafka_clusters: dict[str, str]
) -> None:
    seeded = replicated_flow(kafka_clusters)
    make_user("olga", "operator")
    log_in(page, live_server.url, "olga")
    page.goto(f"{live_server.url}/flows/{seeded.flow.pk}/")
    page.get_by_role("link", name="Records").click()
    page.wait_for_url(f"**/flows/{seeded.flow.pk}/records/")
    # The flow's topics on the shared source: its own, and the heartbeats topic every flow replicates.
    expect(page.locator("#records-topic option", has_text=seeded.topic)).to_have_count(1)
    page.select_option("#records-topic", seeded.topic)
    page.fill("#records-offset", "2")
    page.fill("#records-limit", "3")
    page.get_by_role("button", name="Read").click()

    row = page.locator("tr[data-offset='2']")
    expect(row).to_be_visible(timeout=30_000)
    value = seeded.records[2][1].decode()
    expect(row.locator("td[data-side=source][data-field=value] pre")).to_have_text(value)
    expect(row.locator("td[data-side=target][data-field=value] pre")).to_have_text(value)
    expect(row.locator("td[data-side=target][data-field=offset]")).to_have_text(str(2 + SHIFT))
    expect(page.locator("#records-table tbody tr")).to_have_count(3)

    later = page.locator("tr[data-offset='4']")
    later.get_by_role("button", name="Find on target").click()
    expect(later.locator("td[data-field=match] strong")).to_have_text(f"exact at target offset {4 + SHIFT}")
    shoot(page, "flow-records")
