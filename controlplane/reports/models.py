"""An analytics report: one run of a Spark job (latency, topology, audit) over a window of the facts lake."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from controlplane.reports.choices import ReportJob, ReportStatus


class Report(models.Model):
    """A job run with its parameters, status, duration and JSON summary; a failure keeps its error."""

    job = models.CharField(max_length=16, choices=ReportJob.choices)
    since = models.DateTimeField(null=True, blank=True)
    until = models.DateTimeField(null=True, blank=True)
    parameters = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=16, choices=ReportStatus.choices, default=ReportStatus.QUEUED)
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    duration_seconds = models.FloatField(null=True, blank=True)
    output = models.CharField(max_length=1024, blank=True, default="")
    summary = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.job} #{self.pk} ({self.status})"
