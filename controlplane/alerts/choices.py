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


# Kinds watched per cluster rather than per flow: their rules are global only.
CLUSTER_KINDS = frozenset({AlertKind.CLUSTER_UNREACHABLE})


class AlertState(models.TextChoices):
    PENDING = "pending", "Pending"  # the condition holds, not yet for the rule's for_seconds
    FIRING = "firing", "Firing"
    RESOLVED = "resolved", "Resolved"


OPEN = (AlertState.PENDING, AlertState.FIRING)
