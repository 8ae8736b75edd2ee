from __future__ import annotations

from django.db import models


class AlertKind(models.TextChoices):
    """What a rule watches. Each kind's value and unit are described in ``services/figures.py``."""

    LAG_RECORDS = "lag_records", "Replication lag (records)"
    LATENCY_P99 = "latency_p99", "p99 replication latency (ms)"
    TASK_NOT_RUNNING = "task_not_running", "Tasks not running (unplaced, failed, lease lost)"
    DATA_LOSS = "data_loss", "Data loss reported (records)"
    CLUSTER_UNREACHABLE = "cluster_unreachable", "Cluster unreachable"
    CHECKPOINT_AGE = "checkpoint_age", "Checkpoint age (s)"
    UNDER_REPLICATED = "under_replicated", "Under-replicated partitions"
    OFFLINE_PARTITIONS = "offline_partitions", "Offline partitions"
    UNDER_MIN_ISR = "under_min_isr", "Partitions under min.insync.replicas"
    BROKERS_DOWN = "brokers_down", "Brokers down"


# Kinds watched per cluster rather than per flow: their rules are global only.
CLUSTER_KINDS = frozenset({AlertKind.CLUSTER_UNREACHABLE})
# Cluster kinds read from the cluster's broker health (monitoring's BrokerHealth rows).
BROKER_KINDS = frozenset(
    {AlertKind.UNDER_REPLICATED, AlertKind.OFFLINE_PARTITIONS, AlertKind.UNDER_MIN_ISR, AlertKind.BROKERS_DOWN}
)
CLUSTER_KINDS = CLUSTER_KINDS | BROKER_KINDS


class AlertState(models.TextChoices):
    PENDING = "pending", "Pending"  # the condition holds, not yet for the rule's for_seconds
    FIRING = "firing", "Firing"
    RESOLVED = "resolved", "Resolved"


OPEN = (AlertState.PENDING, AlertState.FIRING)


class TargetKind(models.TextChoices):
    """How a notification target is told: Alertmanager's webhook JSON, a Slack-compatible ``{"text": ...}`` POST to
    an incoming-webhook URL, or an e-mail through Django's mail backend (the ``EMAIL_*`` settings)."""

    WEBHOOK = "webhook", "Webhook (Alertmanager JSON)"
    SLACK = "slack", "Slack-compatible incoming webhook"
    EMAIL = "email", "E-mail"


URL_KINDS = frozenset({TargetKind.WEBHOOK, TargetKind.SLACK})
