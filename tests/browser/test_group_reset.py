"""Resetting a consumer group's offsets from its page in the cluster browser, on real brokers: an operator previews
a reset to a UTC time, reads the exact counts, confirms, and the group holds the previewed offsets."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from tests.browser.conftest import log_in, make_user, shoot
from tests.support.groupreset import RECORDS, committed, seed

pytestmark = [pytest.mark.kafka, pytest.mark.django_db(transaction=True)]


def cells(page: Page, row: str) -> list[str]:
    return [text.strip() for text in page.locator(f"{row} td").all_inner_texts()]


def test_an_operator_previews_a_reset_to_a_time_confirms_it_and_the_group_is_moved(
    page: Page, live_server: LiveServer, kafka_clusters: dict[str, str]
) -> None:
    seeded = seed(kafka_clusters)
    make_user("olga", "operator")
    log_in(page, live_server.url, "olga")
    page.goto(f"{live_server.url}/clusters/{seeded.cluster.pk}/browse/#group/{seeded.group}")
    expect(page.locator("#group-offsets tbody tr")).to_have_count(3)

    page.get_by_role("button", name="Reset offsets").click()
    page.select_option("#reset-to", "timestamp")
    page.fill("#reset-topic", seeded.topic)
    page.fill("#reset-timestamp", "2023-11-14 22:13:24")  # record 4's time: every partition goes to offset 4
    page.get_by_role("button", name="Preview").click()
    expect(page.locator("#reset-totals")).to_have_text("7 records read again, 1 record skipped.")
    rows = {p: cells(page, f'#reset-result tr[data-partition="{seeded.topic}-{p}"]')[1:] for p in range(3)}
    assert rows == {
        0: ["3", "4", "0", "1", "0", str(RECORDS)],
        1: ["5", "4", "1", "0", "0", str(RECORDS)],
        2: ["10", "4", "6", "0", "0", str(RECORDS)],
    }
    shoot(page, "group-reset-preview")

    page.get_by_role("button", name="Confirm reset").click()
    expect(page.locator("#reset-result .alert.ok")).to_contain_text(f"Offsets of {seeded.group} reset.")
    assert committed(seeded.bootstrap, seeded.group) == {0: 4, 1: 4, 2: 4}
    page.reload()
    expect(page.locator(f'#group-offsets tr[data-partition="{seeded.topic}-2"] td').nth(1)).to_have_text("4")
