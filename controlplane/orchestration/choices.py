from __future__ import annotations

from django.db import models


class TaskState(models.TextChoices):
    PENDING = "PENDING", "Pending"
    RUNNING = "RUNNING", "Running"
    PAUSED = "PAUSED", "Paused"
    STOPPED = "STOPPED", "Stopped"
    FAILED = "FAILED", "Failed"
