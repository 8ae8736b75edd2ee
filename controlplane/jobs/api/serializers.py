"""The job as the API shows it: its state, and its result or error once it has ended."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from rest_framework import serializers

from controlplane.core.fields import BoundedJSONField
from controlplane.jobs.choices import JobState
from controlplane.jobs.models import Job


class JobSerializer(serializers.ModelSerializer[Job]):
    """Poll ``url`` until ``state`` is succeeded (``result`` holds the answer) or failed (``error`` says why)."""

    state = serializers.ChoiceField(choices=JobState.choices, help_text="queued, running, succeeded or failed")
    url = serializers.SerializerMethodField(help_text="where to poll the job: GET /api/v1/jobs/{id}/")
    result = BoundedJSONField(allow_null=True, help_text="the job's answer once it succeeded, else null")
    error = serializers.CharField(help_text="why the job failed (a stale job says so), else ''")
    expires_at = serializers.DateTimeField(
        allow_null=True,
        help_text="a queued or running job not finished by then is reported failed as stale (its worker died)",
    )

    class Meta:
        model = Job
        fields = [
            "id",
            "kind",
            "state",
            "url",
            "result",
            "error",
            "created_at",
            "started_at",
            "finished_at",
            "expires_at",
        ]
        read_only_fields = fields

    def get_url(self, job: Job) -> str:
        return reverse("job-detail", args=[job.pk])


class JobBusySerializer(serializers.Serializer[dict[str, Any]]):
    """409: a job for the same thing is queued or running (poll ``job``); 503: the job could not be queued."""

    detail = serializers.CharField()
    job = JobSerializer()
