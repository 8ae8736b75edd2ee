"""What each rule kind measures, read from what monitoring and orchestration already store: no Kafka call here.

- ``lag_records``: source records not yet replicated, ``health.current_lag`` as the graph and the total-lag tile
  read it. While the flow's tasks run, their own report; otherwise the running ones' report plus the observer's
  ``stopped_lag`` of the partitions no live task holds (paused, failed, unplaced: source end offsets minus the
  flow's stored positions), because a stopped task's last report stays frozen, and an unplaced one has none.
- ``latency_p99``: the worst partition's p99 replication latency (ms) of running tasks; a paused flow has none.
- ``task_not_running``: tasks that should run and do not hold a live RUNNING lease (unplaced, failed, lease lost).
  A paused or disabled flow is not expected to run: 0.
- ``data_loss``: records the tasks report lost, or 1 when a task stopped on data loss and reported no count.
- ``cluster_unreachable``: 1 when the observer's last check failed, 0 when it answered.
- ``under_replicated``, ``offline_partitions``, ``under_min_isr``, ``brokers_down``: per cluster, the figures of its
  broker health (``brokerfigures``); no data before the first read, when it failed, or when it is stale.
- ``checkpoint_age``: per consumer group in the flow's observation (subject ``flow:<id>:group:<group>``), the
  observation's time minus the group's newest checkpoint (seconds). A group the observer found idle (nothing
  committed on the source since its newest checkpoint) is current however old: 0, so it never fires and its open
  alert resolves; so does that of a group no longer checkpointed. A group whose idleness the observer could not
  tell (the source did not answer), a group without a timestamp, and every group of a flow whose observation is
  missing, stale or failed to read the checkpoints, are no data.

A value of None means no data (nothing reported yet, or the observation is stale): such a reading neither opens
nor resolves an alert, and the message says "no data".
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from controlplane.alerts.choices import BROKER_KINDS, CLUSTER_KINDS, OPEN, AlertKind
from controlplane.alerts.models import Alert, AlertRule
from controlplane.alerts.services.brokerfigures import broker_values
from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from controlplane.monitoring.models import ClusterObservation, FlowObservation
from controlplane.monitoring.services.health import (
    FlowTotals,
    current_lag,
    fresh_observation,
    replicating,
    stale_after,
    totals,
)
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
    AlertKind.CHECKPOINT_AGE: "s",
    AlertKind.UNDER_REPLICATED: "partitions",
    AlertKind.OFFLINE_PARTITIONS: "partitions",
    AlertKind.UNDER_MIN_ISR: "partitions",
    AlertKind.BROKERS_DOWN: "brokers",
}
SUBJECT_MAX = Alert._meta.get_field("subject").max_length or 0


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
    group: str = ""  # checkpoint age: the consumer group
    note: str = ""  # said instead of the value (an idle group, a group no longer checkpointed)

    @property
    def breached(self) -> bool:
        return self.value is not None and self.value > self.rule.threshold

    @property
    def message(self) -> str:
        label = AlertKind(self.kind).label
        who = f"{self.name}, group {self.group}" if self.group else self.name
        if self.value is None:
            return f"{who}: {label}: no data"
        if self.note:
            return f"{who}: {self.note}"
        if self.kind == AlertKind.CLUSTER_UNREACHABLE:
            return f"{who}: {'unreachable' if self.value else 'reachable'}"
        unit = UNITS[AlertKind(self.kind)]
        relation = "above" if self.breached else "at or below"
        return f"{who}: {label} {self.value:,.0f} {unit} {relation} {self.rule.threshold:,.0f}"


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
    alerted: dict[int, set[str]] = {}
    for flow_id, group in Alert.objects.filter(kind=AlertKind.CHECKPOINT_AGE, state__in=OPEN).values_list(
        "flow_id", "group"
    ):
        alerted.setdefault(flow_id, set()).add(group)
    found = []
    for flow in flows:
        status, fresh = statuses[flow.pk], fresh_observation(observed.get(flow.pk), now)
        for kind, measure in MEASURES.items():
            rule = book.rule(kind, flow.pk)
            if rule is not None:
                value = measure(status, totals(status), fresh)
                found.append(Reading(kind, f"flow:{flow.pk}", flow.name, rule, value, flow_id=flow.pk))
        rule = book.rule(AlertKind.CHECKPOINT_AGE, flow.pk)
        if rule is not None:
            found += checkpoint_readings(flow, rule, fresh, alerted.get(flow.pk, set()))
    return found + cluster_readings(book, now)


def checkpoint_readings(
    flow: Flow, rule: AlertRule, observation: FlowObservation | None, alerted: set[str]
) -> list[Reading]:
    """One reading per consumer group of the flow's observation, and per group with an open alert (so that no data
    keeps it as it is, and a group no longer checkpointed resolves it)."""
    # An observation whose checkpoint read failed kept the previous read's checkpoints under a new time.
    read = observation is not None and not observation.error
    groups: dict[str, dict[str, object]] = dict(observation.checkpoints) if read and observation else {}
    found = []
    for group in sorted(set(groups) | alerted):
        value: float | None = None
        note = ""
        fresh = groups.get(group)
        stamp = fresh.get("timestamp") if fresh is not None else None
        if not read:
            pass  # no data
        elif fresh is None:
            value, note = 0.0, "no longer checkpointed"
        elif fresh.get("idle") is True:
            value, note = 0.0, "idle: nothing committed since its newest checkpoint, nothing to checkpoint"
        elif fresh.get("idle") is False and isinstance(stamp, int | float) and observation is not None:
            value = max(0.0, round(observation.at.timestamp() - stamp / 1000, 1))
        subject = group_subject(flow.pk, group)
        found.append(Reading(rule.kind, subject, flow.name, rule, value, flow_id=flow.pk, group=group, note=note))
    return found


def group_subject(flow_id: int, group: str) -> str:
    """``flow:<id>:group:<group>``; a group too long for the column is named by a digest of it instead."""
    subject = f"flow:{flow_id}:group:{group}"
    if len(subject) <= SUBJECT_MAX:
        return subject
    return f"flow:{flow_id}:group-sha256:{hashlib.sha256(group.encode()).hexdigest()}"


def cluster_readings(book: RuleBook, now: datetime) -> list[Reading]:
    found = []
    for kind in CLUSTER_KINDS:
        rule = book.rule(kind, None)
        if rule is None:
            continue
        if kind in BROKER_KINDS:
            values = broker_values(kind, now)
            found += [Reading(kind, f"cluster:{c.pk}", c.alias, rule, v, cluster_id=c.pk) for c, v in values]
            continue
        observed = {o.cluster_id: o for o in ClusterObservation.objects.all()}
        for cluster in Cluster.objects.all():
            observation, value = observed.get(cluster.pk), None
            if observation is not None and observation.at >= now - stale_after():
                value = 0.0 if observation.reachable else 1.0
            found.append(Reading(kind, f"cluster:{cluster.pk}", cluster.alias, rule, value, cluster_id=cluster.pk))
    return found


def lag_records(status: FlowStatus, flow_totals: FlowTotals, observation: FlowObservation | None) -> float | None:
    lag = current_lag(status, flow_totals, observation)
    return None if lag is None else float(lag)


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
