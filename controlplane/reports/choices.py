from __future__ import annotations

from django.db import models


class ReportJob(models.TextChoices):
    LATENCY = "latency", "Latency"
    TOPOLOGY = "topology", "Topology"
    AUDIT = "audit", "Audit"


class ReportStatus(models.TextChoices):
    QUEUED = "QUEUED", "Queued"
    RUNNING = "RUNNING", "Running"
    SUCCEEDED = "SUCCEEDED", "Succeeded"
    NO_DATA = "NO_DATA", "No data"  # the job ran, but the window held nothing for it to analyse
    FAILED = "FAILED", "Failed"
