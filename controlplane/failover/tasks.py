"""Celery jobs of the failover wizard: thin, they call ``machine.execute`` (logic is tested by calling that)."""

from __future__ import annotations

from celery import shared_task

from controlplane.failover import steps
from controlplane.failover.services import machine


@shared_task(ignore_result=True, acks_late=False, soft_time_limit=machine.RUNNING_SECONDS - 20)
def run_step(failover_id: int, token: str) -> str:
    """Run the step claimed under ``token``; its result or error is stored with the failover."""
    return machine.execute(failover_id, token, steps.handler)
