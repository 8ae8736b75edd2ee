"""Running analytics jobs for the control plane: the Spark work is replication.analytics.run_job's."""

from __future__ import annotations

import logging
import time
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.db.models import QuerySet
from django.utils import timezone

from controlplane.clusters.models import Cluster
from controlplane.clusters.services import client_settings
from controlplane.core import parallel
from controlplane.flows.services import default_facts_lake
from controlplane.monitoring.models import ClusterObservation
from controlplane.monitoring.services.observe import probe_due
from controlplane.reports.choices import ReportJob, ReportStatus
from controlplane.reports.models import Report

log = logging.getLogger(__name__)

ACTIVE = (ReportStatus.QUEUED, ReportStatus.RUNNING)
# A run still queued or running this long after it was requested lost its worker or its task message (neither is
# retried): it no longer holds a slot, or a crash would lock its user out for good.
ABANDONED_AFTER = timedelta(hours=24)
CLOCK_SKEW = timedelta(minutes=5)  # how far a client's clock may run ahead of ours (a window ending "now")
# Postgres advisory lock that serialises counting the active runs and inserting one (any constant unique to it).
_SLOTS_LOCK = 0x6D_70_72_65_70_6F_72_74  # "mpreport"


class WindowError(ValueError):
    """A report window the lake cannot answer for; names the field (since, until) and the reason."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field, self.reason = field, reason


class ActiveLimitReached(Exception):
    """A report run refused because too many are queued or running; names the setting that bounds them."""

    def __init__(self, limit: str, value: int, whose: str) -> None:
        super().__init__(f"Too many report runs queued or running: at most {value} {whose} ({limit}).")
        self.limit, self.value = limit, value


def check_window(since: datetime | None, until: datetime | None, now: datetime | None = None) -> None:
    """Raise WindowError unless [since, until) is a window the lake can hold: since before until, until not in the
    future beyond CLOCK_SKEW, neither before the lake's retention. An open end is the lake's start or now."""
    now = now or timezone.now()
    oldest = now - timedelta(hours=settings.MIRRORPLANE_FACTS_RETENTION_HOURS) - CLOCK_SKEW
    retention = (
        f"the facts lake keeps {settings.MIRRORPLANE_FACTS_RETENTION_HOURS} h (MIRRORPLANE_FACTS_RETENTION_HOURS)"
    )
    if since is not None and until is not None and since >= until:
        raise WindowError("until", "must be after since")
    if until is not None and until > now + CLOCK_SKEW:
        raise WindowError("until", f"must not be more than {_minutes(CLOCK_SKEW)} in the future")
    if since is not None and since > now + CLOCK_SKEW:
        raise WindowError("since", "must not be in the future")
    if since is not None and since < oldest:
        raise WindowError("since", f"must be {oldest:%Y-%m-%dT%H:%M}Z or later: {retention}")
    if until is not None and until <= oldest:
        raise WindowError("until", f"must be after {oldest:%Y-%m-%dT%H:%M}Z: {retention}")


def _minutes(delta: timedelta) -> str:
    return f"{delta.total_seconds() / 60:g} minutes"


def active_reports() -> QuerySet[Report]:
    """The runs that hold a slot: queued or running, and requested less than ABANDONED_AFTER ago."""
    return Report.objects.filter(status__in=ACTIVE, created_at__gt=timezone.now() - ABANDONED_AFTER)


def submit(
    job: str,
    since: datetime | None = None,
    until: datetime | None = None,
    parameters: dict[str, Any] | None = None,
    requested_by: User | None = None,
) -> Report:
    """Insert a queued report, unless MIRRORPLANE_REPORT_MAX_ACTIVE_PER_USER of the user's or
    MIRRORPLANE_REPORT_MAX_ACTIVE in all are active already (ActiveLimitReached). The caller enqueues the run.

    Counting and inserting is one transaction that holds a lock, so concurrent requests cannot both take the last
    slot: on Postgres an advisory lock, on SQLite the database's write lock, which the transaction takes when it
    begins (settings: transaction_mode IMMEDIATE).
    """
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_SLOTS_LOCK])
        active = active_reports()
        per_user = settings.MIRRORPLANE_REPORT_MAX_ACTIVE_PER_USER
        if requested_by is not None and active.filter(requested_by=requested_by).count() >= per_user:
            raise ActiveLimitReached("MIRRORPLANE_REPORT_MAX_ACTIVE_PER_USER", per_user, "per user")
        if active.count() >= settings.MIRRORPLANE_REPORT_MAX_ACTIVE:
            raise ActiveLimitReached("MIRRORPLANE_REPORT_MAX_ACTIVE", settings.MIRRORPLANE_REPORT_MAX_ACTIVE, "in all")
        return Report.objects.create(
            job=job, since=since, until=until, parameters=parameters or {}, requested_by=requested_by
        )


def lake_uri() -> str:
    return default_facts_lake()


def output_dir(report: Report) -> Path:
    """Under <state dir>/analytics: the job's tables and summary.json (the summary is kept on the row too, and the
    flow pages read it there)."""
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
            settings.MIRRORPLANE_SPARK_MASTER or None,
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
    """Beat: one report per job over the last full hour, each only while MIRRORPLANE_REPORT_MAX_ACTIVE allows."""
    until = timezone.now().replace(minute=0, second=0, microsecond=0)
    reports = []
    for job in ReportJob.values:
        try:
            reports.append(submit(job, since=until - timedelta(hours=1), until=until))
        except ActiveLimitReached as exc:
            log.warning("hourly %s report not queued: %s", job, exc)
    return reports


def prune_lake(now: datetime | None = None) -> int:
    """Beat: drop the default lake's hour partitions older than MIRRORPLANE_FACTS_RETENTION_HOURS; returns how many.

    Only the lake the reports read: a flow that names its own lake keeps its own retention."""
    from replication.facts.lake import prune  # pyarrow loads only where the lake is pruned

    cutoff = (now or timezone.now()) - timedelta(hours=settings.MIRRORPLANE_FACTS_RETENTION_HOURS)
    removed = prune(lake_uri(), cutoff)
    if removed:
        log.info("facts retention: removed %d hour partitions older than %s from %s", removed, cutoff, lake_uri())
    return removed


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
