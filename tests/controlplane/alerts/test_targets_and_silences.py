"""Notification targets managed through the API (webhook, Slack-compatible, e-mail) with a test send each, and the
silences and acknowledgements that hold notifications back: roles, audit records, 400s naming the field, outbound
refusal, and real deliveries to a local HTTP receiver and a local SMTP server (aiosmtpd)."""

from __future__ import annotations

import email
import socket
from collections.abc import Callable, Iterator
from datetime import timedelta
from email import policy
from email.message import EmailMessage
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope, Session
from django.test import override_settings
from django.utils import timezone

from controlplane.alerts.choices import AlertKind, AlertState, TargetKind
from controlplane.alerts.models import Alert, AlertRule, Silence, WebhookTarget
from controlplane.alerts.services.evaluate import evaluate
from controlplane.audit.models import AuditRecord
from controlplane.clusters import crypto
from controlplane.flows.models import Flow
from tests.controlplane.alerts.conftest import running
from tests.controlplane.alerts.test_webhooks import TOKEN, Receiver

pytestmark = pytest.mark.django_db
Api = Callable[[str | None], Any]


class Inbox:
    """An aiosmtpd handler keeping every envelope it is handed."""

    def __init__(self) -> None:
        self.envelopes: list[Envelope] = []

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        self.envelopes.append(envelope)
        return "250 OK"


@pytest.fixture(autouse=True)
def allow_local_receivers() -> Iterator[None]:
    with override_settings(MIRRORPLANE_WEBHOOK_ALLOWED_HOSTS=["127.0.0.1"]):
        yield


@pytest.fixture
def hook() -> Iterator[Receiver]:
    running_receiver = Receiver(200)
    yield running_receiver
    running_receiver.server.shutdown()
    running_receiver.server.server_close()


@pytest.fixture
def smtp() -> Iterator[Inbox]:
    """A real SMTP server on 127.0.0.1, and Django's SMTP backend pointed at it."""
    inbox = Inbox()
    with socket.socket() as probe:  # a free port: the Controller checks its server by connecting to the given one
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        with override_settings(
            EMAIL_BACKEND="django.core.mail.backends.smtp.EmailBackend",
            EMAIL_HOST="127.0.0.1",
            EMAIL_PORT=port,
            DEFAULT_FROM_EMAIL="mirrorplane@example.com",
        ):
            yield inbox
    finally:
        controller.stop()


def parsed(envelope: Envelope) -> EmailMessage:
    content = envelope.original_content or b""
    message = email.message_from_bytes(content, policy=policy.default)
    assert isinstance(message, EmailMessage)
    return message


def slack(name: str, url: str) -> WebhookTarget:
    return WebhookTarget.objects.create(
        name=name, kind=TargetKind.SLACK, url_encrypted=crypto.encrypt(url), url_origin="http://127.0.0.1"
    )


def actions(object_type: str) -> list[str]:
    rows = AuditRecord.objects.filter(object_type=object_type).order_by("id")
    return list(rows.values_list("action", flat=True))


def test_admins_manage_slack_and_email_targets_operators_cannot_and_the_url_is_never_shown(
    api: Api, hook: Receiver
) -> None:
    body = {"name": "chat", "kind": "slack", "url": hook.url}
    assert api("operator").post("/api/v1/alert-webhooks/", body, format="json").status_code == 403
    created = api("admin").post("/api/v1/alert-webhooks/", body, format="json")
    assert created.status_code == 201, created.content
    url = f"/api/v1/alert-webhooks/{created.json()['id']}/"
    shown = api("viewer").get(url)
    assert shown.json()["kind"] == "slack"
    assert shown.json()["url_origin"] == f"http://127.0.0.1:{hook.server.server_port}"
    assert TOKEN not in shown.content.decode() and "url" not in shown.json()
    assert api("admin").patch(url, {"enabled": False}, format="json").json()["enabled"] is False
    assert crypto.decrypt(WebhookTarget.objects.get().url_encrypted) == hook.url  # an edit keeps the stored URL
    mail = {"name": "oncall", "kind": "email", "recipients": ["a@example.com", "b@example.com"]}
    assert api("admin").post("/api/v1/alert-webhooks/", mail, format="json").status_code == 201
    assert api("operator").delete(url).status_code == 403
    assert api("admin").delete(url).status_code == 204
    assert list(WebhookTarget.objects.values_list("name", "recipients")) == [
        ("oncall", ["a@example.com", "b@example.com"])
    ]
    assert actions("alerts.webhooktarget") == [
        "alert_webhook.create",
        "alert_webhook.update",
        "alert_webhook.create",
        "alert_webhook.delete",
    ]
    assert all(TOKEN not in str(r.after) + str(r.before) for r in AuditRecord.objects.all())


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "x", "kind": "slack"}, "url"),
        ({"name": "x", "kind": "email"}, "recipients"),
        ({"name": "x", "kind": "email", "recipients": ["not an address"]}, "recipients"),
        ({"name": "x", "kind": "email", "recipients": ["a@example.com"], "url": "https://hooks.example.com/"}, "url"),
        (
            {"name": "x", "kind": "slack", "url": "https://hooks.example.com/", "recipients": ["a@example.com"]},
            "recipients",
        ),
        ({"name": "x", "kind": "pager", "url": "https://hooks.example.com/"}, "kind"),
        ({"name": "x", "kind": "slack", "url": "https://hooks.example.com/", "channel": "#ops"}, "channel"),
        ({"name": "x", "kind": "slack", "url": "http://mixed.example.com/services/T0"}, "url"),  # one private address
        ({"name": "x", "kind": "slack", "url": "http://metadata.example.com/"}, "url"),  # link-local
    ],
)
def test_a_bad_target_is_a_400_naming_the_field(api: Api, body: dict[str, Any], field: str) -> None:
    response = api("admin").post("/api/v1/alert-webhooks/", body, format="json")
    assert response.status_code == 400, response.content
    assert list(response.json()) == [field]
    assert WebhookTarget.objects.count() == 0


def test_a_test_send_reaches_the_slack_receiver_and_returns_its_status_audited_by_the_admin(
    api: Api, hook: Receiver
) -> None:
    chat = slack("chat", hook.url)
    url = f"/api/v1/alert-webhooks/{chat.pk}/test/"
    assert api("operator").post(url, {}, format="json").status_code == 403
    response = api("admin").post(url, {}, format="json")
    assert response.json() == {"delivered": True, "status": 200, "error": ""}
    ((path, body),) = hook.bodies
    assert path == f"/hooks/{TOKEN}"
    assert list(body) == ["text"] and "test notification to chat" in body["text"]
    (audited,) = AuditRecord.objects.filter(action="alert_webhook.test")
    assert (audited.actor_username, (audited.after or {})["delivered"]) == ("admin-user", True)
    assert api("admin").post(url, {"extra": 1}, format="json").json() == {"extra": ["Unknown field."]}


def test_a_test_send_to_nothing_listening_returns_the_error(api: Api) -> None:
    chat = slack("chat", f"http://127.0.0.1:1/hooks/{TOKEN}")
    response = api("admin").post(f"/api/v1/alert-webhooks/{chat.pk}/test/", {}, format="json")
    assert response.json()["delivered"] is False
    assert "ConnectionRefusedError" in response.json()["error"]
    assert WebhookTarget.objects.get().last_error == response.json()["error"]


def test_an_alert_reaches_slack_as_text_and_email_on_a_real_smtp_server(
    flow: Flow, set_status: Callable[..., None], hook: Receiver, smtp: Inbox
) -> None:
    AlertRule.objects.create(kind=AlertKind.LAG_RECORDS, threshold=1000, for_seconds=0)
    slack("chat", hook.url)
    WebhookTarget.objects.create(
        name="oncall", kind=TargetKind.EMAIL, recipients=["ops@example.com", "sre@example.com"]
    )
    set_status(running(lag=7000))
    evaluate(timezone.now())

    ((_, body),) = hook.bodies
    assert body == {
        "text": "[FIRING] MirrorplaneReplicationLag us-west->us-east: "
        "us-west->us-east: Replication lag (records) 7,000 records above 1,000"
    }
    (envelope,) = smtp.envelopes
    assert (envelope.mail_from, envelope.rcpt_tos) == (
        "mirrorplane@example.com",
        ["ops@example.com", "sre@example.com"],
    )
    message = parsed(envelope)
    line = (
        "[FIRING] MirrorplaneReplicationLag us-west->us-east: "
        "us-west->us-east: Replication lag (records) 7,000 records above 1,000"
    )
    assert (message["Subject"], message["To"]) == (line, "ops@example.com, sre@example.com")
    assert message.get_content().splitlines() == [line]

    set_status(running(lag=0))
    evaluate(timezone.now())
    assert "[RESOLVED]" in hook.bodies[1][1]["text"]
    assert len(smtp.envelopes) == 2 and parsed(smtp.envelopes[1])["Subject"].startswith("[RESOLVED] ")


def test_a_test_email_reaches_the_recipients(api: Api, smtp: Inbox) -> None:
    oncall = WebhookTarget.objects.create(name="oncall", kind=TargetKind.EMAIL, recipients=["ops@example.com"])
    response = api("admin").post(f"/api/v1/alert-webhooks/{oncall.pk}/test/", {}, format="json")
    assert response.json() == {"delivered": True, "status": None, "error": ""}
    (envelope,) = smtp.envelopes
    assert envelope.rcpt_tos == ["ops@example.com"]
    assert (
        parsed(envelope)["Subject"]
        == "[TEST] Mirrorplane: a test notification to oncall; alerts will arrive like this."
    )


def test_a_silenced_alert_shows_silenced_sends_nothing_and_is_sent_once_the_silence_is_expired(
    api: Api, flow: Flow, set_status: Callable[..., None], hook: Receiver
) -> None:
    AlertRule.objects.create(kind=AlertKind.LAG_RECORDS, threshold=1000, for_seconds=0)
    slack("chat", hook.url)
    body = {"kind": "lag_records", "flow": flow.pk, "duration_seconds": 3600, "reason": "planned catch-up"}
    assert api("viewer").post("/api/v1/alert-silences/", body, format="json").status_code == 403
    created = api("operator").post("/api/v1/alert-silences/", body, format="json")
    assert created.status_code == 201, created.content
    silence = created.json()
    assert (silence["created_by"], silence["active"]) == ("operator-user", True)

    set_status(running(lag=7000))
    (alert,) = evaluate(timezone.now())
    assert hook.bodies == []
    listed = api("viewer").get("/api/v1/alerts/").json()
    assert [(a["id"], a["state"], a["silenced_by"]) for a in listed] == [(alert.pk, "firing", [silence["id"]])]

    evaluate(timezone.now())
    assert hook.bodies == []  # still silenced
    expired = api("operator").post(f"/api/v1/alert-silences/{silence['id']}/expire/", {}, format="json")
    assert expired.json()["active"] is False
    evaluate(timezone.now())
    assert [b["text"].split()[0] for _, b in hook.bodies] == ["[FIRING]"]
    evaluate(timezone.now())
    assert len(hook.bodies) == 1  # sent once
    assert api("viewer").get("/api/v1/alerts/").json()[0]["silenced_by"] == []
    assert actions("alerts.silence") == ["alert_silence.create", "alert_silence.expire"]


def test_a_silence_of_another_flow_or_kind_does_not_hold_the_alert(
    api: Api, flow: Flow, set_status: Callable[..., None], hook: Receiver
) -> None:
    AlertRule.objects.create(kind=AlertKind.LAG_RECORDS, threshold=1000, for_seconds=0)
    slack("chat", hook.url)
    now = timezone.now()
    Silence.objects.create(kind=AlertKind.DATA_LOSS, reason="r", starts_at=now, ends_at=now + timedelta(hours=1))
    set_status(running(lag=7000))
    evaluate(timezone.now())
    assert len(hook.bodies) == 1


def test_an_acknowledged_alert_is_not_notified_again_while_it_fires(
    api: Api, flow: Flow, set_status: Callable[..., None], hook: Receiver
) -> None:
    rule = AlertRule.objects.create(kind=AlertKind.LAG_RECORDS, threshold=1000, for_seconds=0)
    slack("chat", hook.url)
    body = {"rule": rule.pk, "duration_seconds": 600, "reason": "noisy"}
    silence = api("operator").post("/api/v1/alert-silences/", body, format="json").json()
    set_status(running(lag=7000))
    (alert,) = evaluate(timezone.now())

    url = f"/api/v1/alerts/{alert.pk}/acknowledge/"
    assert api("viewer").post(url, {"note": "mine"}, format="json").status_code == 403
    acked = api("operator").post(url, {"note": "looking into it"}, format="json")
    assert acked.status_code == 200, acked.content
    shown = acked.json()
    assert (shown["acknowledged_by"], shown["acknowledged_note"]) == ("operator-user", "looking into it")
    assert shown["acknowledged_at"] is not None
    assert api("operator").post(url, {}, format="json").status_code == 409  # acknowledged already

    api("operator").post(f"/api/v1/alert-silences/{silence['id']}/expire/", {}, format="json")
    evaluate(timezone.now())
    assert hook.bodies == []  # acknowledged: its held firing is not sent
    set_status(running(lag=0))
    evaluate(timezone.now())
    assert hook.bodies == []  # its firing was never told, so neither is its resolution
    assert Alert.objects.get(pk=alert.pk).state == AlertState.RESOLVED
    assert api("operator").post(url, {}, format="json").status_code == 409  # resolved

    set_status(running(lag=7000))
    (again,) = evaluate(timezone.now())
    assert again.pk != alert.pk
    assert [b["text"].split()[0] for _, b in hook.bodies] == ["[FIRING]"]  # a new episode is told
    assert actions("alerts.alert").count("alert.acknowledge") == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"duration_seconds": 600, "reason": "r"}, "kind"),
        ({"kind": "lag_records", "duration_seconds": 10, "reason": "r"}, "duration_seconds"),
        ({"kind": "lag_records", "duration_seconds": 600, "reason": ""}, "reason"),
        ({"kind": "lag_records", "duration_seconds": 600, "reason": "r", "ends_in": 5}, "ends_in"),
        ({"kind": "nonsense", "duration_seconds": 600, "reason": "r"}, "kind"),
        ({"kind": "data_loss", "rule": "RULE", "duration_seconds": 600, "reason": "r"}, "kind"),
    ],
)
def test_a_bad_silence_is_a_400_naming_the_field(api: Api, flow: Flow, body: dict[str, Any], field: str) -> None:
    rule = AlertRule.objects.create(kind=AlertKind.LAG_RECORDS, threshold=1)
    body = {k: (rule.pk if v == "RULE" else v) for k, v in body.items()}
    response = api("operator").post("/api/v1/alert-silences/", body, format="json")
    assert response.status_code == 400, response.content
    assert list(response.json()) == [field]
    assert Silence.objects.count() == 0
