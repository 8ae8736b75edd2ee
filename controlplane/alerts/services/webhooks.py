"""Notification delivery to every enabled target: the Alertmanager webhook payload (version 4) POSTed to a webhook,
``{"text": ...}`` POSTed to a Slack-compatible incoming webhook, or an e-mail through Django's mail backend (the
``EMAIL_*`` settings, with ``EMAIL_TIMEOUT`` bounding it).

Called after the alert changes were committed, with a short timeout per target, through ``outbound``: only to
addresses it allows, and never following a redirect (a 3xx is a failed delivery). A failure is stored on the target
(``last_status``, ``last_error``, which only admins see) and logged without the URL, which may carry a token; it
never raises into the evaluation.

The SMTP server is the deployment's own (its environment names it), so ``outbound`` does not vet it; the URLs
users give are vetted. Every attempt also writes an ``alert_webhook.deliver`` audit record, by the system (no
actor), after the request returned: the target, its kind and origin (scheme, host and port: the path, query or
userinfo may hold a token), the alerts it carried by id, and whether it was delivered. A test send is
``alert_webhook.test``, by the admin who asked. Never the body, nor the HTTP status or the error: every role reads the
audit log, and what an address answered is for admins only (on the target)."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.mail import EmailMessage, get_connection
from django.db import transaction
from django.utils import timezone

from controlplane.alerts.choices import AlertKind, AlertState, TargetKind
from controlplane.alerts.models import Alert, WebhookTarget
from controlplane.alerts.services import outbound
from controlplane.audit.services import record
from controlplane.clusters import crypto

TIMEOUT_SECONDS = 5.0
DELIVER = "alert_webhook.deliver"
TEST = "alert_webhook.test"
ZERO_TIME = "0001-01-01T00:00:00Z"  # Alertmanager's "no end yet"
ALERT_NAMES = {
    AlertKind.LAG_RECORDS: "MirrorplaneReplicationLag",
    AlertKind.LATENCY_P99: "MirrorplaneReplicationLatencyP99",
    AlertKind.TASK_NOT_RUNNING: "MirrorplaneTaskNotRunning",
    AlertKind.DATA_LOSS: "MirrorplaneDataLoss",
    AlertKind.CLUSTER_UNREACHABLE: "MirrorplaneClusterUnreachable",
    AlertKind.CHECKPOINT_AGE: "MirrorplaneCheckpointAge",
    AlertKind.UNDER_REPLICATED: "MirrorplaneUnderReplicatedPartitions",
    AlertKind.OFFLINE_PARTITIONS: "MirrorplaneOfflinePartitions",
    AlertKind.UNDER_MIN_ISR: "MirrorplaneUnderMinIsrPartitions",
    AlertKind.BROKERS_DOWN: "MirrorplaneBrokersDown",
}
log = logging.getLogger(__name__)
SEVERITY = {AlertKind.DATA_LOSS: "critical", AlertKind.CLUSTER_UNREACHABLE: "critical"}


def origin(url: str) -> str:
    """scheme://host[:port] of the URL: all of it that may be shown (its path or query may hold a token)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host  # an IPv6 literal keeps its brackets
    return f"{parts.scheme}://{host}{f':{parts.port}' if parts.port else ''}"


def payload(receiver: str, alerts: Sequence[Alert]) -> dict[str, Any]:
    items = [alert_item(a) for a in alerts]
    status = "firing" if any(a.state == AlertState.FIRING for a in alerts) else "resolved"
    return {
        "version": "4",
        "groupKey": "mirrorplane",
        "truncatedAlerts": 0,
        "status": status,
        "receiver": receiver,
        "groupLabels": {},
        "commonLabels": {"source": "mirrorplane"},
        "commonAnnotations": {},
        "externalURL": "",
        "alerts": items,
    }


def alert_item(alert: Alert) -> dict[str, Any]:
    labels = {
        "alertname": ALERT_NAMES[AlertKind(alert.kind)],
        "kind": alert.kind,
        "severity": SEVERITY.get(AlertKind(alert.kind), "warning"),
    }
    labels["cluster" if alert.cluster_id is not None else "flow"] = alert.name
    if alert.group:
        labels["group"] = alert.group
    return {
        "status": "resolved" if alert.state == AlertState.RESOLVED else "firing",
        "labels": labels,
        "annotations": {"summary": alert.message, "value": "" if alert.value is None else f"{alert.value:g}"},
        "startsAt": _time(alert.fired_at or alert.started_at),
        "endsAt": _time(alert.resolved_at) if alert.resolved_at else ZERO_TIME,
        "generatorURL": f"/flows/{alert.flow_id}/" if alert.flow_id is not None else "/alerts/",
        "fingerprint": f"{alert.pk:016x}",
    }


@dataclass(frozen=True)
class Outcome:
    """How one delivery went: the HTTP status (None for e-mail, or when no answer came) and why it failed, or ""."""

    status: int | None
    error: str

    @property
    def delivered(self) -> bool:
        return not self.error


def notify(alerts: Sequence[Alert]) -> None:
    if not alerts:
        return
    ids = [alert.pk for alert in alerts]
    for target in WebhookTarget.objects.filter(enabled=True):
        outcome = _send(target, payload(target.name, alerts), summary(alerts))
        _record(target, outcome, DELIVER, after={"alerts": ids})


def deliver(target: WebhookTarget, body: dict[str, Any], alert_ids: Sequence[int] = ()) -> bool:
    """POST ``body`` (about the alerts ``alert_ids``) to the target; whether it was answered with a 2xx."""
    outcome = _post(target, body)
    _record(target, outcome, DELIVER, after={"alerts": list(alert_ids)})
    return outcome.delivered


def send_test(target: WebhookTarget, actor: Any) -> Outcome:
    """A test notification to the target (a made-up firing alert), audited as ``alert_webhook.test`` by ``actor``;
    bounded by TIMEOUT_SECONDS (EMAIL_TIMEOUT for e-mail), so a web request may wait for it."""
    test_item = {
        "status": "firing",
        "labels": {"alertname": "MirrorplaneTestNotification", "kind": "test", "severity": "none"},
        "annotations": {"summary": f"a test notification to {target.name}", "value": ""},
        "startsAt": _time(timezone.now()),
        "endsAt": ZERO_TIME,
        "generatorURL": "/alerts/",
        "fingerprint": f"{0:016x}",
    }
    body = payload(target.name, []) | {"status": "firing", "alerts": [test_item]}
    text = f"[TEST] Mirrorplane: a test notification to {target.name}; alerts will arrive like this."
    outcome = _send(target, body, text)
    _record(target, outcome, TEST, actor=actor)
    return outcome


def summary(alerts: Sequence[Alert]) -> str:
    """One line per alert, firing or resolved, as Slack and e-mail show them."""
    lines = []
    for alert in alerts:
        state = "RESOLVED" if alert.state == AlertState.RESOLVED else "FIRING"
        lines.append(f"[{state}] {ALERT_NAMES[AlertKind(alert.kind)]} {alert.name}: {alert.message}")
    return "\n".join(lines)


def _send(target: WebhookTarget, body: dict[str, Any], text: str) -> Outcome:
    if target.kind == TargetKind.SLACK:
        return _post(target, {"text": text})
    if target.kind == TargetKind.EMAIL:
        return _mail(target, text)
    return _post(target, body)


def _post(target: WebhookTarget, body: dict[str, Any]) -> Outcome:
    status, error = None, ""
    try:
        url = crypto.decrypt(target.url_encrypted)
        data, headers = json.dumps(body).encode(), {"Content-Type": "application/json"}
        with outbound.post(url, data, headers, TIMEOUT_SECONDS) as response:  # the serializer allows http(s) only
            status = response.status
        if not 200 <= status < 300:
            redirect = " (redirects are not followed)" if 300 <= status < 400 else ""
            error = f"HTTP {status} {response.reason}{redirect}"
    except Exception as exc:  # any failure is the target's, stored on it; the evaluation goes on
        error = _reason(exc)
    return Outcome(status, error)


def _mail(target: WebhookTarget, text: str) -> Outcome:
    first = text.partition("\n")[0]
    more = text.count("\n")
    subject = f"{first[:150]}{f' (and {more} more)' if more else ''}"
    try:
        connection = get_connection(timeout=settings.EMAIL_TIMEOUT)
        EmailMessage(subject, text + "\n", to=list(target.recipients), connection=connection).send()
    except Exception as exc:  # the SMTP server's refusal or absence is the target's failure, stored on it
        return Outcome(None, _reason(exc))
    return Outcome(None, "")


def _record(target: WebhookTarget, outcome: Outcome, action: str, actor: Any = None, **values: Any) -> None:
    if outcome.error:
        log.warning("notification target %s (%s): %s", target.name, target.url_origin, outcome.error)
    with transaction.atomic():  # the request has returned: no network I/O while this transaction is open
        WebhookTarget.objects.filter(pk=target.pk).update(
            last_sent_at=timezone.now(), last_status=outcome.status, last_error=outcome.error
        )
        after = {"webhook": target.name, "kind": target.kind, "origin": target.url_origin}
        after |= values.get("after", {}) | {"delivered": outcome.delivered}
        record(actor, action, target, after=after)


def _reason(exc: Exception) -> str:
    # These messages name the host or address at most, never the path or query; the type says timeouts and refusals.
    return f"{type(exc).__name__}: {exc}"[:500]


def _time(at: datetime) -> str:
    return at.astimezone(UTC).isoformat().replace("+00:00", "Z")
