"""What each rule kind measures, read from what monitoring and orchestration already store: no Kafka call here.

- ``lag_records``: source records not yet replicated. While the flow's tasks run, their own report; while they do
  not (paused, failed, unplaced), the observer's ``stopped_lag`` (source end offsets minus the last reported
  positions), because a stopped task's last report stays frozen while the source grows.
- ``latency_p99``: the worst partition's p99 replication latency (ms) of running tasks; a paused flow has none.
- ``task_not_running``: tasks that should run and do not hold a live RUNNING lease (unplaced, failed, lease lost).
  A paused or disabled flow is not expected to run: 0.
- ``data_loss``: records the tasks report lost, or 1 when a task stopped on data loss and reported no count.
- ``cluster_unreachable``: 1 when the observer's last check failed, 0 when it answered.

A value of None means no data (nothing reported yet, or the observation is stale): such a reading neither opens
nor resolves an alert, and the message says "no data".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings

from controlplane.alerts.choices import CLUSTER_KINDS, AlertKind
from controlplane.alerts.models import AlertRule
from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from controlplane.monitoring.models import ClusterObservation, FlowObservation
from controlplane.monitoring.services.health import FlowTotals, replicating, totals
from controlplane.orchestration.choices import TaskFailure, TaskState
from controlplane.orchestration.planning import runs
from controlplane.orchestration.services.status import flow_statuses
from controlplane.orchestration.taskstatus import FlowStatus

UNITS = {
    AlertKind.LAG_RECORDS: "records",
    AlertKind.LATENCY_P99: "ms",
    AlertKind.TASK_NOT_RUNNING: "tasks",
    AlertKind.DATA_LOSS: "records",
    AlertKind.CLUSTER_UNREACHABLE: "",
}


@dataclass(frozen=True)
class Reading:
    """One kind's value for one subject, against the rule that applies to it."""

    kind: str
    subject: str
    name: str
    rule: AlertRule
    value: float | None
    flow_id: int | None = None
    cluster_id: int | None = None

    @property
    def breached(self) -> bool:
        return self.value is not None and self.value > self.rule.threshold

    @property
    def message(self) -> str:
        label = AlertKind(self.kind).label
        if self.value is None:
            return f"{self.name}: {label}: no data"
        if self.kind == AlertKind.CLUSTER_UNREACHABLE:
            return f"{self.name}: {'unreachable' if self.value else 'reachable'}"
        unit = UNITS[AlertKind(self.kind)]
        relation = "above" if self.breached else "at or below"
        return f"{self.name}: {label} {self.value:,.0f} {unit} {relation} {self.rule.threshold:,.0f}"


class RuleBook:
    """The enabled rule that applies to a kind and a flow: the flow's own, else the global default."""

    def __init__(self, rules: list[AlertRule]) -> None:
        self._rules = {(r.kind, r.flow_id): r for r in rules}

    def rule(self, kind: str, flow_id: int | None) -> AlertRule | None:
        found = self._rules.get((kind, flow_id)) if flow_id is not None else None
        found = found or self._rules.get((kind, None))
        return found if found is not None and found.enabled else None


def readings(now: datetime) -> list[Reading]:
    book = RuleBook(list(AlertRule.objects.all()))
    flows = list(Flow.objects.select_related("source", "target").filter(enabled=True))
    statuses = flow_statuses(flows)
    observed = {o.flow_id: o for o in FlowObservation.objects.filter(flow__in=flows)}
    found = []
    for flow in flows:
        status, fresh = statuses[flow.pk], _fresh(observed.get(flow.pk), now)
        for kind, measure in MEASURES.items():
            rule = book.rule(kind, flow.pk)
            if rule is not None:
                value = measure(status, totals(status), fresh)
                found.append(Reading(kind, f"flow:{flow.pk}", flow.name, rule, value, flow_id=flow.pk))
    return found + cluster_readings(book, now)


def cluster_readings(book: RuleBook, now: datetime) -> list[Reading]:
    found = []
    for kind in CLUSTER_KINDS:
        rule = book.rule(kind, None)
        if rule is None:
            continue
        observed = {o.cluster_id: o for o in ClusterObservation.objects.all()}
        for cluster in Cluster.objects.all():
            observation, value = observed.get(cluster.pk), None
            if observation is not None and observation.at >= now - _stale_after():
                value = 0.0 if observation.reachable else 1.0
            found.append(Reading(kind, f"cluster:{cluster.pk}", cluster.alias, rule, value, cluster_id=cluster.pk))
    return found


def _stale_after() -> timedelta:
    # Three observer periods: one late tick is not "no data", a stopped observer is.
    return timedelta(seconds=3 * settings.MIRRORPLANE_OBSERVE_INTERVAL_SECONDS)


def _fresh(observation: FlowObservation | None, now: datetime) -> FlowObservation | None:
    return observation if observation is not None and observation.at >= now - _stale_after() else None


def lag_records(status: FlowStatus, flow_totals: FlowTotals, observation: FlowObservation | None) -> float | None:
    if replicating(status):
        return None if flow_totals.lag is None else float(flow_totals.lag)
    if observation is None or observation.stopped_lag is None:
        return None
    return float(observation.stopped_lag)


def latency_p99(status: FlowStatus, flow_totals: FlowTotals, observation: FlowObservation | None) -> float | None:
    return flow_totals.latency_p99_ms if replicating(status) else None


def task_not_running(status: FlowStatus, flow_totals: FlowTotals, observation: FlowObservation | None) -> float | None:
    if status.paused:
        return 0.0
    due = [t for t in status.tasks if runs(t.task_id, t.desired_count)]
    if not due:
        return None  # the controller has not planned the flow's tasks yet
    return float(sum(1 for t in due if t.state != TaskState.RUNNING or not t.live or t.unplaced_reason))


def data_loss(status: FlowStatus, flow_totals: FlowTotals, observation: FlowObservation | None) -> float | None:
    lost = sum(t.lost_records for t in status.tasks)
    stopped_on_loss = any(t.failure == TaskFailure.DATA_LOSS for t in status.tasks)
    return float(max(lost, 1 if stopped_on_loss else 0)) if status.tasks else None


Measure = Callable[[FlowStatus, FlowTotals, FlowObservation | None], float | None]
MEASURES: dict[str, Measure] = {
    AlertKind.LAG_RECORDS: lag_records,
    AlertKind.LATENCY_P99: latency_p99,
    AlertKind.TASK_NOT_RUNNING: task_not_running,
    AlertKind.DATA_LOSS: data_loss,
}
