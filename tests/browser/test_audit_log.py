"""The audit log page: found from the navigation by any role, newest first, filtered by user, action, object and
time, paged, and showing what each change did without ever a credential.

Screenshots: ``artifacts/screenshots/audit-<what>.png`` at 1280x800."""

from __future__ import annotations

from datetime import timedelta

import pytest
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from controlplane.audit.models import AuditRecord
from controlplane.audit.services import record
from controlplane.clusters.models import Cluster
from tests.browser.conftest import log_in, make_user, shoot

pytestmark = pytest.mark.django_db(transaction=True)
SECRET = "s3cret-Sasl-pa55word"


def test_an_admins_change_is_found_by_action_and_user_and_never_shows_the_password(
    page: Page, live_server: LiveServer
) -> None:
    make_user("audit-admin", "admin")
    make_user("audit-viewer", "viewer")
    log_in(page, live_server.url, "audit-admin")
    created = page.request.post(
        f"{live_server.url}/api/v1/clusters/",
        data={
            "alias": "vault",
            "bootstrap_servers": "vault.invalid:9093",
            "security_protocol": "SASL_PLAINTEXT",
            "sasl_mechanism": "SCRAM-SHA-512",
            "sasl_username": "replicator",
            "sasl_password": SECRET,
        },
        headers={"X-CSRFToken": _csrf(page)},
    )
    assert created.status == 201, created.text()
    pk = created.json()["id"]
    changed = page.request.patch(
        f"{live_server.url}/api/v1/clusters/{pk}/",
        data={"bootstrap_servers": "vault2.invalid:9093"},
        headers={"X-CSRFToken": _csrf(page)},
    )
    assert changed.status == 200, changed.text()

    page.context.clear_cookies()
    log_in(page, live_server.url, "audit-viewer")
    page.get_by_role("link", name="Audit log").click()
    rows = page.locator("#audit tbody tr")
    expect(rows.first.locator("td:nth-child(3)")).to_have_text("auth.login")  # the viewer's own, just now
    expect(rows.first.locator("td:nth-child(2)")).to_have_text("audit-viewer")
    page.fill("#audit-object-type", "clusters.cluster")
    page.get_by_role("button", name="Filter").click()
    # A new host drops the stored password (credentials never go to a host they were not entered for).
    expect(rows.locator("td:nth-child(3)")).to_have_text(
        ["cluster.credentials_cleared", "cluster.update", "cluster.create"]
    )
    expect(rows.nth(1).locator("td:nth-child(2)")).to_have_text("audit-admin")
    expect(rows.nth(1).locator("td:nth-child(5) li")).to_have_text(
        ["bootstrap_servers: vault.invalid:9093 → vault2.invalid:9093", "sasl_password: ******** → \N{EN DASH}"]
    )

    page.fill("#audit-action", "cluster.create")
    page.get_by_role("button", name="Filter").click()
    expect(rows).to_have_count(1)
    expect(rows.locator("td:nth-child(4)")).to_contain_text(f"clusters.cluster #{pk} vault")
    expect(rows.locator("td:nth-child(5)")).to_contain_text("sasl_password: ********")
    shoot(page, "audit-filtered")
    assert SECRET not in page.content()

    page.fill("#audit-actor", "somebody-else")
    page.get_by_role("button", name="Filter").click()
    expect(page.locator("#audit tbody td.muted")).to_have_text("No audit record matches these filters.")


def test_the_log_pages_by_fifty_and_filters_by_time(page: Page, live_server: LiveServer) -> None:
    cluster = Cluster.objects.create(alias="a", bootstrap_servers="h:1")
    entries = [record(None, "cluster.check", cluster, after={"n": n}) for n in range(60)]
    base = entries[0].at.replace(microsecond=0) - timedelta(days=2)
    for n, entry in enumerate(entries):  # a minute apart, two days ago
        AuditRecord.objects.filter(pk=entry.pk).update(at=base + timedelta(minutes=n))
    make_user("audit-operator", "operator")
    log_in(page, live_server.url, "audit-operator")
    page.goto(f"{live_server.url}/audit/")
    rows = page.locator("#audit tbody tr")
    # The 60 checks, and the operator's own login just now on top.
    expect(page.locator("#audit-range")).to_have_text("1\N{EN DASH}50 of 61")
    expect(rows.first.locator("td:nth-child(3)")).to_have_text("auth.login")
    expect(rows.nth(1).locator("td:nth-child(5)")).to_have_text("n: 59")
    page.get_by_role("button", name="Next page").click()
    expect(page.locator("#audit-range")).to_have_text("51\N{EN DASH}61 of 61")
    expect(rows.last.locator("td:nth-child(5)")).to_have_text("n: 0")
    expect(page.get_by_role("button", name="Next page")).to_be_disabled()

    # The time fields take the browser's local time, 24-hour; the page sends UTC instants. Records 10..19 by minute.
    since_ms = page.evaluate(f"new Date('{(base + timedelta(minutes=10)).isoformat()}').getTime()")
    local = page.evaluate(
        """(ms) => [ms, ms + 10 * 60000].map((t) => {
            const d = new Date(t), two = (n) => String(n).padStart(2, '0');
            return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ` +
                   `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
        })""",
        since_ms,
    )
    page.fill("#audit-since", local[0])
    page.fill("#audit-until", local[1])
    page.get_by_role("button", name="Filter").click()
    expect(page.locator("#audit-range")).to_have_text("1\N{EN DASH}10 of 10")
    expect(rows.locator("td:nth-child(5)")).to_have_text([f"n: {n}" for n in range(19, 9, -1)])
    shoot(page, "audit-time-window")


def _csrf(page: Page) -> str:
    return str(page.locator('meta[name="csrf-token"]').get_attribute("content"))


def test_a_time_the_api_cannot_read_is_named(page: Page, live_server: LiveServer) -> None:
    make_user("audit-viewer2", "viewer")
    log_in(page, live_server.url, "audit-viewer2")
    page.goto(f"{live_server.url}/audit/")
    page.fill("#audit-since", "last tuesday")
    page.get_by_role("button", name="Filter").click()
    expect(page.locator("#audit .alert.error")).to_contain_text("since: Datetime has wrong format")
