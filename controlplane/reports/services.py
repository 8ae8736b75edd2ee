"""Running analytics jobs for the control plane: the Spark work is replication.analytics.run_job's."""

from __future__ import annotations

import logging
import time
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.utils import timezone

from controlplane.reports.choices import ReportJob, ReportStatus
from controlplane.reports.models import Report

log = logging.getLogger("controlplane.reports")


def lake_uri() -> str:
    return str(getattr(settings, "MIRRORPLANE_FACTS_LAKE", "") or Path(settings.STATE_DIR) / "lake")


def output_dir(report: Report) -> Path:
    """Under <state dir>/analytics, where the flow pages look for summaries."""
    return Path(settings.STATE_DIR) / "analytics" / f"{report.job}-{report.pk}"


def run(report_id: int) -> Report:
    """Run the report's job and store the outcome; a failure is stored with its error, never lost."""
    from replication.analytics.jobs import run_job  # Spark loads only in the process that runs a report

    report = Report.objects.get(pk=report_id)
    report.status, report.started_at = ReportStatus.RUNNING, timezone.now()
    report.output = str(output_dir(report))
    report.save(update_fields=["status", "started_at", "output"])
    started = time.monotonic()
    try:
        summary = run_job(report.job, lake_uri(), report.output, report.since, report.until,
                          getattr(settings, "MIRRORPLANE_SPARK_MASTER", None) or None, **report.parameters)  # fmt: skip
        report.status, report.summary = ReportStatus.SUCCEEDED, dict(summary)
    except Exception as exc:  # the job's own errors and Spark's: kept on the report
        log.exception("report %s failed", report.pk)
        report.status, report.error = ReportStatus.FAILED, f"{type(exc).__name__}: {exc}"[:10000]
    report.finished_at = timezone.now()
    report.duration_seconds = round(time.monotonic() - started, 3)
    report.save()
    return report


def schedule_hourly() -> list[Report]:
    """Beat: one report per job over the last full hour."""
    until = timezone.now().replace(minute=0, second=0, microsecond=0)
    return [Report.objects.create(job=job, since=until - timedelta(hours=1), until=until) for job in ReportJob.values]
