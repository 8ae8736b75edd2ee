from __future__ import annotations

from django.db import models


class JobState(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"


ACTIVE = (JobState.QUEUED, JobState.RUNNING)
