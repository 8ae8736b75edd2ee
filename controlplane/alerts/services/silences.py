"""Silences and acknowledgements: which of the alerts that changed are told to the targets, and which wait.

A firing alert a silence matches is not sent; it is marked ``notify_held`` and sent by a later evaluation once no
silence matches it, unless it was acknowledged meanwhile. A resolution is sent only if its firing was: not while a
silence matches it, nor when its firing was held. An acknowledged alert is never sent again while it fires; the next
episode of its condition is a new alert, told as usual. Each hold and release is a conditional UPDATE, so two
evaluations at once never send one alert twice."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.db import transaction

from controlplane.alerts.choices import AlertState
from controlplane.alerts.models import Alert, Silence
from controlplane.audit.services import record, snapshot


class NotAcknowledgeable(ValueError):
    """Why the alert cannot be acknowledged (not firing, or acknowledged already)."""


def active(now: datetime) -> list[Silence]:
    return list(Silence.objects.filter(starts_at__lte=now, ends_at__gt=now))


def silencing(alert: Alert, silences: Sequence[Silence], now: datetime) -> list[int]:
    """The ids of the silences that hold for the alert now."""
    return [s.pk for s in silences if s.matches(alert, now)]


def to_notify(changed: Sequence[Alert], now: datetime) -> list[Alert]:
    """Of the alerts that fired or resolved now, and of those held earlier, the ones to send now."""
    silences = active(now)
    send: list[Alert] = []
    for alert in changed:
        silenced = bool(silencing(alert, silences, now))
        if alert.state == AlertState.FIRING:
            if silenced:
                Alert.objects.filter(pk=alert.pk, notify_held=False).update(notify_held=True)
            else:
                send.append(alert)
        elif alert.notify_held:  # resolved, and its firing was never told: nothing to resolve for the targets
            Alert.objects.filter(pk=alert.pk).update(notify_held=False)
        elif not silenced:
            send.append(alert)
    held = Alert.objects.filter(state=AlertState.FIRING, notify_held=True, acknowledged_at=None)
    for alert in held.exclude(pk__in=[a.pk for a in changed]):
        if not silencing(alert, silences, now) and _release(alert):
            send.append(alert)
    return send


def _release(alert: Alert) -> bool:
    return Alert.objects.filter(pk=alert.pk, notify_held=True, acknowledged_at=None).update(notify_held=False) == 1


def acknowledge(alert: Alert, user: Any, note: str, now: datetime) -> Alert:
    """Marks the firing alert acknowledged by ``user`` (audited as ``alert.acknowledge``); NotAcknowledgeable if it
    is not firing or is acknowledged already."""
    with transaction.atomic():
        done = Alert.objects.filter(pk=alert.pk, state=AlertState.FIRING, acknowledged_at=None).update(
            acknowledged_at=now, acknowledged_by=user, acknowledged_note=note
        )
        if done != 1:
            alert.refresh_from_db()
            if alert.state != AlertState.FIRING:
                raise NotAcknowledgeable(f"the alert is {alert.state}: only a firing alert is acknowledged")
            raise NotAcknowledgeable("the alert is acknowledged already")
        alert.refresh_from_db()
        record(user, "alert.acknowledge", alert, after=snapshot(alert))
    return alert


def expire(silence: Silence, user: Any, now: datetime) -> Silence:
    """Ends the silence now (audited as ``alert_silence.expire``); one that has ended already is left as it was."""
    with transaction.atomic():
        if Silence.objects.filter(pk=silence.pk, ends_at__gt=now).update(ends_at=now) == 1:
            silence.refresh_from_db()
            record(user, "alert_silence.expire", silence, after=snapshot(silence))
    return silence
