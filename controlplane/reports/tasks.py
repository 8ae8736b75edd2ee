"""Celery tasks of the reports app: thin wrappers around services."""

from __future__ import annotations

from celery import shared_task
from celery.contrib.django.task import DjangoTask

from controlplane.reports import services


@shared_task(base=DjangoTask, ignore_result=True)  # DjangoTask: delay_on_commit
def run_report(report_id: int) -> str:
    return str(services.run(report_id).status)


@shared_task(ignore_result=True)
def schedule_hourly_reports() -> int:
    reports = services.schedule_hourly()
    for report in reports:
        run_report.delay(report.pk)
    return len(reports)


@shared_task(ignore_result=True)
def collect_heartbeat_facts() -> int:
    return services.collect_heartbeats()


@shared_task(ignore_result=True)
def prune_facts_lake() -> int:
    return services.prune_lake()
