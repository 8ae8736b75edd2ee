"""Webhook delivery: the Alertmanager webhook payload (version 4), POSTed to every enabled target.

Called after the alert changes were committed, with a short timeout per target, through ``outbound``: only to
addresses it allows, and never following a redirect (a 3xx is a failed delivery). A failure is stored on the target
(``last_status``, ``last_error``, which only admins see) and logged without the URL, which may carry a token; it
never raises into the evaluation.

Every attempt also writes an ``alert_webhook.deliver`` audit record, by the system (no actor), after the request
returned: the target, its origin (scheme, host and port: the path, query or userinfo may hold a token), the alerts
it carried by id, and whether it was delivered. Never the body, nor the HTTP status or the error: every role reads the
audit log, and what an address answered is for admins only (on the target)."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from django.db import transaction
from django.utils import timezone

from controlplane.alerts.choices import AlertKind, AlertState
from controlplane.alerts.models import Alert, WebhookTarget
from controlplane.alerts.services import outbound
from controlplane.audit.services import record
from controlplane.clusters import crypto

TIMEOUT_SECONDS = 5.0
DELIVER = "alert_webhook.deliver"
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


def notify(alerts: Sequence[Alert]) -> None:
    ids = [alert.pk for alert in alerts]
    for target in WebhookTarget.objects.filter(enabled=True):
        deliver(target, payload(target.name, alerts), ids)


def deliver(target: WebhookTarget, body: dict[str, Any], alert_ids: Sequence[int] = ()) -> bool:
    """POST ``body`` (about the alerts ``alert_ids``) to the target; whether it was answered with a 2xx."""
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
    if error:
        log.warning("webhook %s (%s): %s", target.name, target.url_origin, error)
    with transaction.atomic():  # the request has returned: no network I/O while this transaction is open
        WebhookTarget.objects.filter(pk=target.pk).update(
            last_sent_at=timezone.now(), last_status=status, last_error=error
        )
        after = {"webhook": target.name, "origin": target.url_origin, "alerts": list(alert_ids), "delivered": not error}
        record(None, DELIVER, target, after=after)
    return not error


def _reason(exc: Exception) -> str:
    # These messages name the host or address at most, never the path or query; the type says timeouts and refusals.
    return f"{type(exc).__name__}: {exc}"[:500]


def _time(at: datetime) -> str:
    return at.astimezone(UTC).isoformat().replace("+00:00", "Z")
