from __future__ import annotations

from django.db import models


class TaskState(models.TextChoices):
    PENDING = "PENDING", "Pending"
    RUNNING = "RUNNING", "Running"
    PAUSED = "PAUSED", "Paused"
    STOPPED = "STOPPED", "Stopped"
    FAILED = "FAILED", "Failed"


class TaskFailure(models.TextChoices):
    """Why a FAILED task stopped, which decides what happens next; blank while the task has not failed."""

    DATA_LOSS = "DATA_LOSS", "Data loss"  # stays stopped until an operator restarts the flow, which accepts the loss
    ERROR = "ERROR", "Error"  # retried after a delay (MIRRORPLANE_RETRY_SECONDS)
