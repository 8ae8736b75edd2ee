"""The Celery task that runs a job: thin, it calls ``services.execute`` (logic is tested by calling that)."""

from __future__ import annotations

from celery import shared_task
from celery.contrib.django.task import DjangoTask

from controlplane.jobs import services


@shared_task(base=DjangoTask, ignore_result=True, acks_late=False, soft_time_limit=services.RUNNING_SECONDS - 10)
def run_job(job_id: str) -> str:
    """Claim the job (queued -> running) and run its kind's function; the result or error is stored with it."""
    return services.execute(job_id)
