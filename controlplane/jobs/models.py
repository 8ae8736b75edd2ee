from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from controlplane.jobs.choices import JobState


class Job(models.Model):
    """One run of a slow action (a connectivity check, a flow preview) that a request started and clients poll.

    ``active_key`` is set while the job is queued or running and is unique: it names what the job works on (a
    cluster, or one user's unsaved form), so a second request for the same thing finds the first instead of
    starting another. ``inputs`` are what the job needs and are cleared when it ends; secrets in them are kept
    encrypted by the app that owns the kind.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    kind = models.CharField(max_length=64)
    state = models.CharField(max_length=16, choices=JobState.choices, default=JobState.QUEUED)
    active_key = models.CharField(max_length=200, null=True, blank=True, unique=True)
    inputs = models.JSONField(default=dict, blank=True)
    result = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True, default="")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["created_at"])]

    def __str__(self) -> str:
        return f"{self.kind} {self.pk} ({self.state})"
