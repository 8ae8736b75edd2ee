"""``GET /api/v1/jobs/{id}/`` and the answers of the requests that start a job (202, 409, 503)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse
from rest_framework import mixins, status, viewsets
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response

from controlplane.core.permissions import IsViewer
from controlplane.jobs import services
from controlplane.jobs.api.serializers import JobBusySerializer, JobSerializer
from controlplane.jobs.models import Job
from controlplane.jobs.tasks import run_job

START_RESPONSES: dict[int, Any] = {
    202: OpenApiResponse(JobSerializer, "queued: poll the job's url"),
    409: OpenApiResponse(JobBusySerializer, "a job for the same thing is queued or running: poll `job`"),
    503: OpenApiResponse(JobBusySerializer, "the job could not be queued (the broker is down): `detail` says why"),
}


class JobViewSet(mixins.RetrieveModelMixin, viewsets.GenericViewSet[Job]):
    """A background job: its state, and its result or error once it has ended."""

    queryset = Job.objects.all()
    serializer_class = JobSerializer
    permission_classes = [IsViewer]

    def get_object(self) -> Job:
        job = super().get_object()
        if not services.may_read(job, self.request.user):
            raise NotFound("No job with this id that your role may read.")
        services.expire(job)
        return job


def start(kind: str, key: str, inputs: dict[str, Any], request: Request) -> Response:
    """Start a job and answer at once: 202 with the job, 409 with the job already at it, 503 if not queued."""
    try:
        job = services.start(kind, key, inputs, request.user)
    except services.Busy as exc:
        body = {"detail": str(exc), "job": JobSerializer(exc.job).data}
        return Response(body, status=status.HTTP_409_CONFLICT)
    try:
        run_job.delay_on_commit(str(job.pk))
    except Exception as exc:  # the broker is down: fail the job now rather than when it expires
        services.refused(job, f"{type(exc).__name__}: {exc}")
        body = {"detail": job.error, "job": JobSerializer(job).data}
        return Response(body, status=status.HTTP_503_SERVICE_UNAVAILABLE)
    job.refresh_from_db()  # with an eager Celery (tests) the job has already run
    body = JobSerializer(job).data
    return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["url"]})
