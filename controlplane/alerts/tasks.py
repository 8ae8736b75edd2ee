"""Beat's alert evaluation (a thin wrapper over services)."""

from __future__ import annotations

from celery import shared_task

from controlplane.alerts.services.evaluate import evaluate


@shared_task(ignore_result=True, expires=30)
def evaluate_alerts() -> int:
    return len(evaluate())
