"""Beat's evaluation: rules against the figures monitoring stores, alerts pending -> firing -> resolved, audited."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from django.utils import timezone

from controlplane.alerts.choices import AlertKind, AlertState
from controlplane.alerts.models import Alert, AlertRule
from controlplane.alerts.services.evaluate import _open, evaluate
from controlplane.alerts.services.figures import readings
from controlplane.audit.models import AuditRecord
from controlplane.flows.models import Flow
from controlplane.monitoring.models import FlowObservation
from tests.controlplane.alerts.conftest import running

pytestmark = pytest.mark.django_db


def lag_rule(flow: Flow | None = None, threshold: float = 1000, for_seconds: int = 60, **extra: object) -> AlertRule:
    return AlertRule.objects.create(
        kind=AlertKind.LAG_RECORDS, flow=flow, threshold=threshold, for_seconds=for_seconds, **extra
    )


def test_a_lag_alert_fires_only_after_for_seconds_and_resolves_when_the_lag_falls(
    flow: Flow, set_status: Callable[..., None]
) -> None:
    lag_rule(threshold=1000, for_seconds=60)
    set_status(running(lag=5000))
    start = timezone.now()
    assert evaluate(start) == []
    alert = Alert.objects.get()
    assert (alert.state, alert.value, alert.flow_id) == (AlertState.PENDING, 5000.0, flow.pk)
    assert evaluate(start + timedelta(seconds=59)) == []
    assert Alert.objects.get().state == AlertState.PENDING

    fired = evaluate(start + timedelta(seconds=61))
    assert [(a.pk, a.state) for a in fired] == [(alert.pk, AlertState.FIRING)]
    assert "5,000 records above 1,000" in fired[0].message
    assert evaluate(start + timedelta(seconds=70)) == []  # firing stays firing, told once

    set_status(running(lag=10))
    resolved = evaluate(start + timedelta(seconds=80))
    assert [(a.pk, a.state) for a in resolved] == [(alert.pk, AlertState.RESOLVED)]
    assert resolved[0].resolved_at == start + timedelta(seconds=80)
    actions = list(
        AuditRecord.objects.filter(object_type="alerts.alert").order_by("id").values_list("action", flat=True)
    )
    assert actions == ["alert.fire", "alert.resolve"]


def test_a_condition_that_clears_before_for_seconds_leaves_no_alert(
    flow: Flow, set_status: Callable[..., None]
) -> None:
    lag_rule(for_seconds=60)
    set_status(running(lag=5000))
    start = timezone.now()
    evaluate(start)
    set_status(running(lag=0))
    assert evaluate(start + timedelta(seconds=30)) == []
    assert not Alert.objects.exists()


def test_a_paused_flow_under_traffic_fires_on_the_observed_lag_not_its_frozen_report(
    flow: Flow, set_status: Callable[..., None]
) -> None:
    lag_rule(threshold=1000, for_seconds=0)
    now = timezone.now()
    # The stopped task's last report said 0; the observer read 52,000 records written since.
    set_status(running(lag=0, state="STOPPED", live=False), paused=True)
    FlowObservation.objects.create(flow=flow, at=now, stopped_lag=52_000)
    fired = evaluate(now)
    assert [(a.kind, a.state, a.value) for a in fired] == [(AlertKind.LAG_RECORDS, AlertState.FIRING, 52_000.0)]

    # Resumed and caught up: the tasks' own report counts again, and the alert resolves.
    set_status(running(lag=3))
    assert [a.state for a in evaluate(now + timedelta(seconds=10))] == [AlertState.RESOLVED]


def test_no_data_opens_no_alert_and_resolves_none(flow: Flow, set_status: Callable[..., None]) -> None:
    lag_rule(for_seconds=0)
    now = timezone.now()
    set_status()  # no task reported yet
    assert evaluate(now) == [] and not Alert.objects.exists()
    (reading,) = readings(now)
    assert reading.value is None and reading.message.endswith("no data") and not reading.breached

    set_status(running(lag=5000))
    assert [a.state for a in evaluate(now)] == [AlertState.FIRING]
    # Paused with a stale observation (the observer stopped): no data, which is not a recovery.
    set_status(running(lag=0, state="STOPPED", live=False), paused=True)
    FlowObservation.objects.create(flow=flow, at=now - timedelta(minutes=10), stopped_lag=0)
    assert evaluate(now + timedelta(seconds=30)) == []
    assert Alert.objects.get().state == AlertState.FIRING


def test_a_flow_rule_overrides_the_global_default(flow: Flow, set_status: Callable[..., None]) -> None:
    lag_rule(threshold=1000, for_seconds=0)
    own = lag_rule(flow, threshold=100_000, for_seconds=0)
    set_status(running(lag=5000))
    now = timezone.now()
    assert evaluate(now) == []  # 5,000 is under the flow's own 100,000
    (reading,) = readings(now)
    assert reading.rule.pk == own.pk

    own.threshold = 10
    own.save()
    assert [a.rule_id for a in evaluate(now)] == [own.pk]

    own.enabled = False  # a flow's disabled rule silences the global default for that flow, and resolves
    own.save()
    assert [a.state for a in evaluate(now + timedelta(seconds=1))] == [AlertState.RESOLVED]
    assert readings(now) == []


def test_task_not_running_counts_unplaced_and_failed_tasks_but_not_a_paused_flow(
    flow: Flow, set_status: Callable[..., None]
) -> None:
    AlertRule.objects.create(kind=AlertKind.TASK_NOT_RUNNING, threshold=0, for_seconds=0)
    set_status(running(lag=0), running(lag=0, task_id=1, state="PENDING", live=False, unplaced_reason="no slots"))
    now = timezone.now()
    (fired,) = evaluate(now)
    assert (fired.kind, fired.value) == (AlertKind.TASK_NOT_RUNNING, 1.0)
    set_status(running(lag=0, state="STOPPED", live=False), paused=True)
    assert [a.state for a in evaluate(now)] == [AlertState.RESOLVED]


def test_data_loss_fires_at_once(flow: Flow, set_status: Callable[..., None]) -> None:
    AlertRule.objects.create(kind=AlertKind.DATA_LOSS, threshold=0, for_seconds=0)
    set_status(running(lag=0, state="FAILED", live=False, failure="DATA_LOSS", lost_records=120))
    (fired,) = evaluate(timezone.now())
    assert (fired.kind, fired.state, fired.value) == (AlertKind.DATA_LOSS, AlertState.FIRING, 120.0)


def test_a_second_evaluation_cannot_open_the_same_alert_twice(flow: Flow, set_status: Callable[..., None]) -> None:
    lag_rule(for_seconds=60)
    set_status(running(lag=5000))
    now = timezone.now()
    evaluate(now)
    # An evaluation that read the open alerts before the first one committed tries to open it again: the
    # database's one-open-alert constraint refuses, and it leaves the first alone.
    (reading,) = readings(now)
    assert _open(reading, now) is None
    assert Alert.objects.count() == 1
