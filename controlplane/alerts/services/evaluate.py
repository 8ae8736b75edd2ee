"""Beat's alert evaluation: readings against rules, alerts opened, fired and resolved in short transactions, each
change audited, and the targets told after the changes are committed (no network I/O in a transaction), except
of what a silence or an acknowledgement holds back (``silences``)."""

from __future__ import annotations

import logging
from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone

from controlplane.alerts.choices import OPEN, AlertState
from controlplane.alerts.models import Alert
from controlplane.alerts.services import silences, webhooks
from controlplane.alerts.services.figures import Reading, readings
from controlplane.audit.services import record, snapshot

log = logging.getLogger(__name__)


def evaluate(now: datetime | None = None) -> list[Alert]:
    """One evaluation; returns the alerts that fired or resolved now (sent to the targets unless silenced)."""
    now = now or timezone.now()
    open_alerts = {(a.kind, a.subject): a for a in Alert.objects.filter(state__in=OPEN)}
    changed: list[Alert] = []
    for reading in readings(now):
        alert = open_alerts.pop((reading.kind, reading.subject), None)
        if reading.breached:
            changed += _held(reading, alert, now)
        elif alert is not None and reading.value is not None:
            changed += _cleared(alert, reading.message, now)
        # No data: an open alert stays as it was. It neither fires nor resolves on a figure nobody reported.
    for alert in open_alerts.values():  # its rule was disabled or deleted, or its flow or cluster is gone
        changed += _cleared(alert, f"{alert.name}: no rule applies any more", now)
    webhooks.notify(silences.to_notify(changed, now))
    return changed


def _held(reading: Reading, alert: Alert | None, now: datetime) -> list[Alert]:
    if alert is None:
        alert = _open(reading, now)
        if alert is None:
            return []  # another evaluation opened it at the same moment
    if alert.state == AlertState.FIRING or (now - alert.started_at).total_seconds() < reading.rule.for_seconds:
        Alert.objects.filter(pk=alert.pk, state=alert.state).update(value=reading.value, message=reading.message)
        return []
    with transaction.atomic():
        # Claimed like a job: only the evaluation whose conditional UPDATE changed the row fires it and notifies.
        fired = Alert.objects.filter(pk=alert.pk, state=AlertState.PENDING).update(
            state=AlertState.FIRING, fired_at=now, value=reading.value, message=reading.message
        )
        if fired != 1:
            return []
        alert.refresh_from_db()
        record(None, "alert.fire", alert, after=snapshot(alert))
    log.warning("alert firing: %s", alert.message)
    return [alert]


def _open(reading: Reading, now: datetime) -> Alert | None:
    try:
        with transaction.atomic():
            return Alert.objects.create(
                kind=reading.kind,
                subject=reading.subject,
                name=reading.name,
                group=reading.group,
                flow_id=reading.flow_id,
                cluster_id=reading.cluster_id,
                rule=reading.rule,
                value=reading.value,
                threshold=reading.rule.threshold,
                message=reading.message,
                started_at=now,
            )
    except IntegrityError:
        return None


def _cleared(alert: Alert, message: str, now: datetime) -> list[Alert]:
    if alert.state == AlertState.PENDING:  # never fired, never told: it leaves no trace
        Alert.objects.filter(pk=alert.pk, state=AlertState.PENDING).delete()
        return []
    with transaction.atomic():
        resolved = Alert.objects.filter(pk=alert.pk, state=AlertState.FIRING).update(
            state=AlertState.RESOLVED, resolved_at=now, message=message
        )
        if resolved != 1:
            return []
        alert.refresh_from_db()
        record(None, "alert.resolve", alert, after=snapshot(alert))
    log.info("alert resolved: %s", alert.message)
    return [alert]
