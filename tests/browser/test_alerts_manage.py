"""The Notifications page manages alerting: an admin creates a rule and a Slack-compatible target, sends the target a
test notification (to a local receiver, allow-listed), silences the flow's lag alerts and acknowledges the firing
alert; each shows on the page and leaves its audit record, and the target's URL never shows.

Screenshot: ``artifacts/screenshots/alerts-manage.png`` at 1280x800."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.test import override_settings
from django.utils import timezone
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from controlplane.alerts.choices import AlertKind, AlertState, TargetKind
from controlplane.alerts.models import Alert, AlertRule, Silence, WebhookTarget
from controlplane.audit.models import AuditRecord
from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from tests.browser.conftest import log_in, make_user, shoot
from tests.controlplane.alerts.test_webhooks import TOKEN, Receiver

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    running = Receiver(200)
    with override_settings(MIRRORPLANE_WEBHOOK_ALLOWED_HOSTS=["127.0.0.1"]):
        yield running
    running.server.shutdown()
    running.server.server_close()


def test_an_admin_creates_a_rule_and_a_target_tests_it_silences_and_acknowledges(
    page: Page, live_server: LiveServer, receiver: Receiver
) -> None:
    AlertRule.objects.all().delete()
    source = Cluster.objects.create(alias="us-west", bootstrap_servers="127.0.0.1:1")
    target = Cluster.objects.create(alias="us-east", bootstrap_servers="127.0.0.1:2")
    flow = Flow.objects.create(source=source, target=target)
    now = timezone.now()
    firing = Alert.objects.create(
        kind=AlertKind.LAG_RECORDS,
        subject=f"flow:{flow.pk}",
        name=flow.name,
        flow=flow,
        state=AlertState.FIRING,
        value=7000,
        threshold=500,
        message=f"{flow.name}: lag 7,000 records above 500",
        started_at=now,
        fired_at=now,
    )
    make_user("notify-admin", "admin")
    log_in(page, live_server.url, "notify-admin")
    page.goto(f"{live_server.url}/alerts/")

    rules = page.locator("#rule-form")
    rules.locator("select[name=kind]").select_option("lag_records")
    rules.locator("select[name=flow]").select_option(label=flow.name)
    rules.locator("input[name=threshold]").fill("500")
    rules.locator("input[name=for_seconds]").fill("30")
    rules.get_by_role("button", name="Create rule").click()
    expect(page.locator("#rule-list tr[data-rule]")).to_contain_text(flow.name)

    targets = page.locator("#target-form")
    targets.locator("input[name=name]").fill("chat")
    targets.locator("select[name=kind]").select_option("slack")
    targets.locator("input[name=url]").fill(receiver.url)
    targets.get_by_role("button", name="Create target").click()
    row = page.locator("#target-list tr[data-name=chat]")
    expect(row).to_contain_text(f"http://127.0.0.1:{receiver.server.server_port}")
    row.get_by_role("button", name="Send test").click()
    expect(page.locator("#target-result")).to_contain_text("Test notification delivered to chat (HTTP 200)")
    expect(page.locator("#target-list tr[data-name=chat]")).to_contain_text("HTTP 200")
    ((path, body),) = receiver.bodies
    assert path == f"/hooks/{TOKEN}" and "test notification to chat" in body["text"]

    silences = page.locator("#silence-form")
    silences.locator("select[name=kind]").select_option("lag_records")
    silences.locator("select[name=flow]").select_option(label=flow.name)
    silences.locator("input[name=reason]").fill("planned catch-up")
    silences.get_by_role("button", name="Create silence").click()
    expect(page.locator("#silence-list tr[data-active=true]")).to_contain_text("planned catch-up")
    alert_row = page.locator(f"#alerts tr[data-alert='{firing.pk}']")
    expect(alert_row).to_contain_text("silenced")

    alert_row.get_by_label("Acknowledgement note").fill("on it")
    alert_row.get_by_role("button", name="Acknowledge").click()
    expect(alert_row).to_contain_text("acknowledged by notify-admin: on it")
    shoot(page, "alerts-manage")
    assert TOKEN not in page.content()

    assert list(AlertRule.objects.values_list("kind", "flow_id", "threshold", "for_seconds")) == [
        ("lag_records", flow.pk, 500.0, 30)
    ]
    assert WebhookTarget.objects.get().kind == TargetKind.SLACK
    silence = Silence.objects.get()
    assert (silence.kind, silence.flow_id, silence.created_by.username) == ("lag_records", flow.pk, "notify-admin")  # type: ignore[union-attr]
    acked = Alert.objects.get(pk=firing.pk)
    assert (acked.acknowledged_by.username, acked.acknowledged_note) == ("notify-admin", "on it")  # type: ignore[union-attr]
    audited = set(AuditRecord.objects.values_list("action", flat=True))
    assert {"alert_rule.create", "alert_webhook.create", "alert_webhook.test", "alert_silence.create"} <= audited
    assert "alert.acknowledge" in audited
