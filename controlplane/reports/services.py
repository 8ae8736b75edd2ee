"""Running analytics jobs for the control plane: the Spark work is replication.analytics.run_job's."""

from __future__ import annotations

import logging
import time
from datetime import timedelta
from functools import partial
from pathlib import Path

from django.conf import settings
from django.utils import timezone

from controlplane.clusters.models import Cluster
from controlplane.clusters.services import client_settings
from controlplane.core import parallel
from controlplane.flows.services import default_facts_lake
from controlplane.monitoring.models import ClusterObservation
from controlplane.monitoring.services.observe import probe_due
from controlplane.reports.choices import ReportJob, ReportStatus
from controlplane.reports.models import Report

log = logging.getLogger("controlplane.reports")


def lake_uri() -> str:
    return default_facts_lake()


def output_dir(report: Report) -> Path:
    """Under <state dir>/analytics, where the flow pages look for summaries."""
    return Path(settings.STATE_DIR) / "analytics" / f"{report.job}-{report.pk}"


def run(report_id: int) -> Report:
    """Run the report's job and store the outcome; a failure is stored with its error, never lost."""
    from replication.analytics.jobs import run_job  # Spark loads only in the process that runs a report

    report = Report.objects.get(pk=report_id)
    # Claimed with a conditional UPDATE: a task delivered twice (or a retry) runs the job once.
    claimed = Report.objects.filter(pk=report_id, status=ReportStatus.QUEUED).update(
        status=ReportStatus.RUNNING, started_at=timezone.now(), output=str(output_dir(report))
    )
    report.refresh_from_db()
    if claimed != 1:
        log.info("report %s is %s already; not run again", report.pk, report.status)
        return report
    started = time.monotonic()
    try:
        summary = run_job(
            report.job,
            lake_uri(),
            report.output,
            report.since,
            report.until,
            getattr(settings, "MIRRORPLANE_SPARK_MASTER", None) or None,
            **report.parameters,
        )
        report.summary = dict(summary)
        report.status = ReportStatus.NO_DATA if summary.get("no_data") else ReportStatus.SUCCEEDED
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


# `__` so the default groups.exclude keeps this group out of checkpoints (it reads replicated heartbeat topics).
HEARTBEAT_GROUP = "__mirrorplane-heartbeat-facts"
HEARTBEAT_GRACE_SECONDS = 5.0  # past the read timeout: a cluster's metadata request and the lake write


def collect_heartbeats(timeout: float = 10.0) -> int:
    """Beat: read every registered cluster's heartbeat topics into the lake (the topology and end-to-end latency
    reports need them); returns the arrivals written. Off with the facts (MIRRORPLANE_FACTS_ENABLED=false).

    The clusters are read side by side, each by its own consumer, within one deadline; a cluster the observer
    found unreachable is skipped until its next probe (monitoring's back-off), so it costs no pass its timeout.
    """
    if not settings.MIRRORPLANE_FACTS_ENABLED:
        return 0
    now = timezone.now()
    clusters = list(Cluster.objects.all())
    observed = {o.cluster_id: o for o in ClusterObservation.objects.filter(cluster__in=clusters)}
    settings_of = {cluster.alias: client_settings(cluster) for cluster in clusters}
    due = [c.alias for c in clusters if probe_due(c, observed.get(c.pk), now)]
    calls = {alias: partial(_collect_heartbeats, settings_of, alias, timeout) for alias in due}
    written = 0
    for alias, outcome in parallel.each_within(calls, timeout + HEARTBEAT_GRACE_SECONDS).items():
        if isinstance(outcome, BaseException):  # one unreachable cluster must not stop the others' heartbeats
            log.warning("heartbeat facts from %s not read: %s", alias, outcome)
        else:
            written += outcome
    return written


def _collect_heartbeats(clusters: dict[str, dict[str, str]], alias: str, timeout: float) -> int:
    """One cluster's heartbeat arrivals, by a collector of its own (closed here, even when the caller stopped
    waiting for it); heartbeats that originate outside the registered clusters are left out."""
    from replication.facts.heartbeats import HeartbeatCollector  # pyarrow loads only where heartbeats are read

    collector = HeartbeatCollector({alias: clusters[alias]}, lake_uri(), group_id=HEARTBEAT_GROUP, sources=clusters)
    try:
        return collector.collect(alias, timeout)
    finally:
        collector.close()
