"""The checkpoint_age rule: per flow and consumer group, the age of the group's newest checkpoint at the flow's
observation. Idle groups (nothing committed since their newest checkpoint) never fire; no data opens and resolves
nothing. Observations are stored rows here: no Kafka."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

import pytest
import yaml
from django.utils import timezone
from rest_framework.test import APIClient

from controlplane.alerts.choices import AlertKind, AlertState
from controlplane.alerts.models import Alert, AlertRule
from controlplane.alerts.services.evaluate import evaluate
from controlplane.alerts.services.figures import readings
from controlplane.alerts.services.webhooks import alert_item
from controlplane.flows.models import Flow
from controlplane.monitoring.models import FlowObservation
from controlplane.monitoring.services.observe import observe_flow
from replication.mm2.records import Checkpoint

pytestmark = pytest.mark.django_db
Api = Callable[[str | None], APIClient]


def ms(at: datetime) -> int:
    return int(at.timestamp() * 1000)


def observe(flow: Flow, at: datetime, error: str = "", **groups: tuple[datetime, bool | None]) -> None:
    """Store what the observer would: each group's newest checkpoint time and whether it is idle."""
    checkpoints = {
        g: {"timestamp": ms(ts), "oldest": ms(ts), "partitions": 3, "idle": idle} for g, (ts, idle) in groups.items()
    }
    FlowObservation.objects.update_or_create(flow=flow, defaults={"at": at, "error": error, "checkpoints": checkpoints})


def age_rule(flow: Flow | None = None, threshold: float = 600, for_seconds: int = 120) -> AlertRule:
    return AlertRule.objects.create(
        kind=AlertKind.CHECKPOINT_AGE, flow=flow, threshold=threshold, for_seconds=for_seconds
    )


@pytest.fixture
def firing(flow: Flow, set_status: Callable[..., None]) -> tuple[Alert, datetime, datetime]:
    """orders-app's checkpoint 900 s old at once: firing; returns the alert, the checkpoint time and now."""
    age_rule(for_seconds=0)
    now = timezone.now()
    checkpoint = now - timedelta(seconds=900)
    observe(flow, now, **{"orders-app": (checkpoint, False)})
    (alert,) = evaluate(now)
    assert (alert.state, alert.group, alert.value) == (AlertState.FIRING, "orders-app", 900.0)
    return alert, checkpoint, now


def test_a_stale_busy_group_fires_after_for_seconds_and_an_idle_one_never(
    flow: Flow, set_status: Callable[..., None]
) -> None:
    age_rule(threshold=600, for_seconds=120)
    start = timezone.now()
    checkpoint, idle_checkpoint = start - timedelta(seconds=700), start - timedelta(hours=5)
    groups = {"orders-app": (checkpoint, False), "billing": (idle_checkpoint, True)}
    observe(flow, start, **groups)
    assert evaluate(start) == []
    alert = Alert.objects.get()
    subject = f"flow:{flow.pk}:group:orders-app"
    assert (alert.state, alert.subject, alert.group, alert.value) == (AlertState.PENDING, subject, "orders-app", 700.0)

    observe(flow, start + timedelta(seconds=119), **groups)
    assert evaluate(start + timedelta(seconds=119)) == []
    assert Alert.objects.get().state == AlertState.PENDING

    observe(flow, start + timedelta(seconds=121), **groups)
    (fired,) = evaluate(start + timedelta(seconds=121))
    assert (fired.pk, fired.state, fired.value) == (alert.pk, AlertState.FIRING, 821.0)
    assert fired.message == f"{flow.name}, group orders-app: Checkpoint age (s) 821 s above 600"
    item = alert_item(fired)
    assert item["labels"] == {
        "alertname": "MirrorplaneCheckpointAge",
        "kind": "checkpoint_age",
        "severity": "warning",
        "flow": flow.name,
        "group": "orders-app",
    }
    assert item["annotations"]["value"] == "821"
    # The idle group's checkpoint is five hours old and current: it is read as 0, never an alert.
    billing = [r for r in readings(start + timedelta(seconds=121)) if r.group == "billing"]
    assert [(r.value, r.breached) for r in billing] == [(0.0, False)]
    assert list(Alert.objects.values_list("group", flat=True)) == ["orders-app"]


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ("fresh", "Checkpoint age (s) 5 s at or below 600"),
        ("idle", "idle: nothing committed since its newest checkpoint, nothing to checkpoint"),
        ("gone", "no longer checkpointed"),
    ],
)
def test_the_alert_resolves_on_a_fresh_checkpoint_when_the_group_goes_idle_or_is_gone(
    flow: Flow, firing: tuple[Alert, datetime, datetime], change: str, said: str
) -> None:
    alert, checkpoint, now = firing
    later = now + timedelta(seconds=30)
    groups = {
        "fresh": {"orders-app": (later - timedelta(seconds=5), False)},
        "idle": {"orders-app": (checkpoint, True)},
        "gone": {},
    }[change]
    observe(flow, later, **groups)
    (resolved,) = evaluate(later)
    assert (resolved.pk, resolved.state, resolved.resolved_at) == (alert.pk, AlertState.RESOLVED, later)
    assert resolved.message == f"{flow.name}, group orders-app: {said}"
    assert alert_item(resolved)["labels"]["group"] == "orders-app"


def test_no_observation_or_a_stale_one_opens_nothing(flow: Flow, set_status: Callable[..., None]) -> None:
    age_rule(for_seconds=0)
    now = timezone.now()
    assert evaluate(now) == [] and readings(now) == []  # never observed: no group, no reading
    observe(flow, now - timedelta(minutes=10), **{"orders-app": (now - timedelta(hours=1), False)})
    assert evaluate(now) == [] and not Alert.objects.exists()
    # Fresh, but the checkpoints were not read this time (the row keeps the previous read's): no data either.
    observe(flow, now, error="checkpoints not read: timeout", **{"orders-app": (now - timedelta(hours=1), False)})
    assert evaluate(now) == [] and not Alert.objects.exists()
    # Fresh, but whether the group is idle is unknown (the source did not answer): no data, not an alarm.
    observe(flow, now, **{"orders-app": (now - timedelta(hours=1), None)})
    assert evaluate(now) == [] and not Alert.objects.exists()
    (reading,) = readings(now)
    assert reading.value is None and reading.message.endswith("Checkpoint age (s): no data")


@pytest.mark.parametrize("no_data", ["stale", "checkpoints not read", "idleness unknown", "deleted"])
def test_no_data_resolves_nothing(flow: Flow, firing: tuple[Alert, datetime, datetime], no_data: str) -> None:
    alert, checkpoint, now = firing
    later = now + timedelta(minutes=5)
    if no_data == "stale":
        pass  # the observer stopped: its row is five minutes old
    elif no_data == "checkpoints not read":
        observe(flow, later, error="checkpoints not read: timeout", **{"orders-app": (checkpoint, False)})
    elif no_data == "idleness unknown":
        observe(flow, later, **{"orders-app": (checkpoint, None)})
    else:
        FlowObservation.objects.all().delete()
    assert evaluate(later) == []
    assert Alert.objects.get().state == AlertState.FIRING
    # Data again, still old: still the one alert, firing, with the new age.
    observe(flow, later, **{"orders-app": (checkpoint, False)})
    assert evaluate(later) == []
    assert list(Alert.objects.values_list("pk", "state", "value")) == [(alert.pk, AlertState.FIRING, 1200.0)]


def test_a_flow_rule_overrides_the_global_one_for_checkpoint_age(flow: Flow, set_status: Callable[..., None]) -> None:
    age_rule(threshold=600, for_seconds=0)
    own = age_rule(flow, threshold=3600, for_seconds=0)
    now = timezone.now()
    observe(flow, now, **{"orders-app": (now - timedelta(seconds=900), False)})
    assert evaluate(now) == []
    assert [r.rule.pk for r in readings(now)] == [own.pk]


def test_a_group_name_too_long_for_the_subject_is_named_by_its_digest(
    flow: Flow, set_status: Callable[..., None]
) -> None:
    age_rule(for_seconds=0)
    group = "g" * 400
    now = timezone.now()
    observe(flow, now, **{group: (now - timedelta(seconds=900), False)})
    (alert,) = evaluate(now)
    assert alert.group == group and alert.subject.startswith(f"flow:{flow.pk}:group-sha256:")
    assert len(alert.subject) <= 255 and alert_item(alert)["labels"]["group"] == group


def test_the_observer_stores_idleness_as_unknown_when_the_source_did_not_answer(
    flow: Flow, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = timezone.now()
    latest = {
        "orders-app": {("us-west.orders", 0): Checkpoint("orders-app", "us-west.orders", 0, 5, 5, timestamp=ms(now))}
    }
    monkeypatch.setattr("controlplane.monitoring.services.readers.latest_checkpoints", lambda *_: latest)
    observation = observe_flow(flow, now, source_reachable=False)
    assert observation.checkpoints["orders-app"]["idle"] is None


def test_the_migration_adds_a_global_default_and_the_api_takes_the_kind(db: None, api: Api) -> None:
    default = AlertRule.objects.get(kind=AlertKind.CHECKPOINT_AGE, flow=None)
    assert (default.threshold, default.for_seconds, default.enabled) == (600.0, 120, True)
    default.delete()
    client = api("operator")
    bad = client.post("/api/v1/alert-rules/", {"kind": "checkpoint_age", "threshold": -1}, format="json")
    assert bad.status_code == 400 and list(bad.json()) == ["threshold"], bad.content
    good = client.post(
        "/api/v1/alert-rules/", {"kind": "checkpoint_age", "threshold": 900, "for_seconds": 300}, format="json"
    )
    assert good.status_code == 201, good.content
    assert (good.json()["kind"], good.json()["threshold"]) == ("checkpoint_age", 900)


def test_the_prometheus_rules_file_leaves_checkpoint_age_out_and_says_so(db: None, api: Api) -> None:
    assert AlertRule.objects.filter(kind=AlertKind.CHECKPOINT_AGE, enabled=True).exists()
    text = api("viewer").get("/api/v1/alerts/prometheus-rules/").content.decode()
    assert "# checkpoint_age: not expressed: /metrics exports no checkpoint age" in text
    assert "MirrorplaneCheckpointAge" not in text
    assert {r["alert"] for r in yaml.safe_load(text)["groups"][0]["rules"]} == {
        "MirrorplaneReplicationLag",
        "MirrorplaneReplicationLatencyP99",
        "MirrorplaneTaskNotRunning",
        "MirrorplaneDataLoss",
    }
