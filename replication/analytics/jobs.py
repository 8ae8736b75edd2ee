"""The analytics jobs: read the lake, run the transforms, write Parquet detail and a JSON summary to `out`.

`run_job` is the one entry point, for the CLI, spark-submit and the control plane's Celery task alike.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from pyspark.errors import PySparkRuntimeError
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from replication.analytics import audit, latency, topology
from replication.analytics.lake import (
    epoch_ms,
    read_facts,
    read_flows,
    read_heartbeats,
    write_detail,
    write_summary,
)
from replication.analytics.options import JOB_NAMES, JobOptions, job_options
from replication.analytics.session import build_session

log = logging.getLogger(__name__)

# Jobs of one process share the session the first of them started (getOrCreate), and the last one to end stops it.
# A worker on Celery's threads pool runs report jobs side by side; PySpark's active session is per thread, so each
# would otherwise think it owned the session and stop it under the others.
_SESSION_LOCK = threading.Lock()
_session_jobs = 0
Summary = dict[str, Any]


@dataclass(frozen=True)
class Job:
    spark: SparkSession
    lake: str
    out: str
    since: datetime | None
    until: datetime | None
    options: JobOptions

    def write(self, frames: dict[str, DataFrame]) -> dict[str, DataFrame]:
        """Write the detail, then hand it back read from `out` (so summaries never recompute)."""
        write_detail(frames, self.out)
        return {name: self.spark.read.parquet(f"{self.out.rstrip('/')}/{name}") for name in frames}


def run_job(
    job: str,
    lake: str,
    out: str,
    since: datetime | None = None,
    until: datetime | None = None,
    master: str | None = None,
    *,
    spark: SparkSession | None = None,
    **options: Any,
) -> Summary:
    """Run one job (`latency`, `topology`, `audit`) on the lake's facts in [since, until) and return its summary.

    `options` are checked against the job's declared options (replication.analytics.options) before Spark starts:
    one the job does not take, or a value of the wrong type or out of bounds, raises OptionError naming it. The
    summary is also written to `<out>/summary.json`, the detail as Parquet under `<out>/<name>`. Raises on any
    failure (unknown job, bad window or options, unreadable lake, Spark errors).
    """
    settings = job_options(job, options)  # ValueError for an unknown job, OptionError for an option it does not take
    since, until = _utc(since), _utc(until)
    if since is not None and until is not None and since >= until:
        raise ValueError(f"since ({since}) must be before until ({until})")
    started = time.monotonic()
    global _session_jobs
    with _SESSION_LOCK:  # never stop a session someone else runs, nor one another job still uses
        owned = spark is None and (_session_jobs > 0 or not _session_exists())
        if owned:
            _session_jobs += 1
        session = spark or build_session(master)
    try:
        log.info("%s: lake %s, window [%s, %s), out %s", job, lake, since, until, out)
        summary = RUNNERS[job](Job(session, lake, out, since, until, settings))
        summary = _header(job, lake, out, since, until, settings) | summary | _no_data(job, summary)
        summary["duration_s"] = round(time.monotonic() - started, 3)
        summary = dict(json.loads(json.dumps(summary, default=str)))
        write_summary(session, out, summary)
        log.info("%s: done in %.1f s", job, summary["duration_s"])
        return summary
    finally:
        if owned:
            with _SESSION_LOCK:
                _session_jobs -= 1
                if _session_jobs == 0:
                    session.stop()


def _session_exists() -> bool:
    """A session runs in this process, whichever thread started it (getActiveSession() sees only this thread's)."""
    try:
        SparkSession.active()
    except PySparkRuntimeError:
        return False
    return True


def _utc(moment: datetime | None) -> datetime | None:
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=UTC)


def _header(job: str, lake: str, out: str, since: datetime | None, until: datetime | None, o: JobOptions) -> Summary:
    window = {"since": since.isoformat() if since else None, "until": until.isoformat() if until else None}
    return {"job": job, "lake": lake, "out": out, **window, "options": asdict(o)}


# What each job needs to have read for its figures to mean anything.
_DATA_OF = {
    "latency": ("facts", "facts"),
    "topology": ("heartbeat_arrivals", "heartbeat arrivals"),
    "audit": ("source_records", "facts"),
}


def _no_data(job: str, summary: Summary) -> Summary:
    """`no_data` and a `note` saying so when the window held nothing for the job to analyse.

    A report over nothing must not read as a clean bill of health (an audit of 0 records is not 100 % complete).
    """
    key, what = _DATA_OF[job]
    empty = not summary.get(key)
    return {"no_data": empty, "note": f"no data: no {what} in the lake for this window" if empty else ""}


def _rows(frame: DataFrame) -> list[dict[str, Any]]:
    return [row.asDict(recursive=True) for row in frame.collect()]


def _iso(column: str) -> Any:
    return F.date_format(column, "yyyy-MM-dd'T'HH:mm:ss'Z'").alias(column)


# -- latency ---------------------------------------------------------------------------------------------------
def run_latency(job: Job) -> Summary:
    facts = read_facts(job.spark, job.lake, job.since, job.until)
    arrivals = read_heartbeats(job.spark, job.lake, job.since, job.until)
    log.info("latency: stage 1/3 sketches per partition and minute")
    minutes = latency.minute_sketches(latency.with_latencies(facts)).cache()  # the one pass over the facts
    partitions = latency.merge(minutes, [*latency.PARTITION_KEYS, "path"]).cache()
    bucket = latency.series_minutes(_span_minutes(minutes, "minute", job.since, job.until))
    try:
        log.info("latency: stage 2/3 percentiles per minute, partition, flow and path")
        detail = job.write(
            {
                "by_minute": latency.per_minute(minutes),
                "by_partition": latency.per_partition(partitions),
                "by_flow": latency.per_flow(partitions),
                "end_to_end": latency.end_to_end(partitions, arrivals),
                "series": latency.series(minutes, bucket),
            }
        )
    finally:
        partitions.unpersist()
        minutes.unpersist()
    log.info("latency: stage 3/3 summary")
    flows = _rows(detail["by_flow"].orderBy("flow"))
    paths = _rows(detail["end_to_end"].orderBy("derived_from", "origin", "destination", "path"))
    facts_read = sum(f["facts"] for f in flows)
    log.info("latency: %d facts processed", facts_read)
    stats = [c for c in detail["series"].columns if c not in ("flow", "path", "at")]
    series = _rows(detail["series"].orderBy("flow", "path", "at").select("flow", "path", _iso("at"), *stats))
    return {
        "facts": facts_read,
        "records": sum(f["records"] for f in flows),
        "flows": flows,
        "end_to_end": paths,
        "series_minutes": bucket,
        "series": series,
    }


def _span_minutes(frame: DataFrame, column: str, since: datetime | None, until: datetime | None) -> float:
    """The window's length, or where an end is open, the span of `column` in `frame` (the data's own)."""
    if since is not None and until is not None:
        return (until - since).total_seconds() / 60
    first, last = frame.agg(F.min(column), F.max(column)).first() or (None, None)
    return (last - first).total_seconds() / 60 if first is not None and last is not None else 0.0


# -- topology --------------------------------------------------------------------------------------------------
def run_topology(job: Job) -> Summary:
    arrivals = read_heartbeats(job.spark, job.lake, job.since, job.until)
    flows = read_flows(job.spark, job.lake, job.options.flows)
    until_ms = as_of(arrivals, epoch_ms(job.until) or int(time.time() * 1000), job.options.collection_lag_s)
    log.info("topology: stage 1/3 paths, links and nodes")
    first = job.write(
        {
            "paths": topology.arrival_paths(arrivals),
            "links": topology.links(topology.observed_links(arrivals), flows, until_ms, job.options.dead_after),
        }
    )
    log.info("topology: stage 2/3 hops, diamonds and cycles")
    links = first["links"]
    detail = first | job.write(
        {
            "hops": topology.hops(first["paths"]),
            "diamonds": topology.diamonds(first["paths"]),
            "cycles": topology.cycles(links),
            "nodes": topology.nodes(links, arrivals),
        }
    )
    log.info("topology: stage 3/3 summary")
    return _topology_summary(detail, links)


def as_of(arrivals: DataFrame, until_ms: int, collection_lag_s: float) -> int:
    """The moment links are judged dead or alive at: the newest arrival, if it trails until_ms by at most the lag.

    Arrivals reach the lake in passes of a collector (every 30 s in the control plane), so just before a pass
    every link has been quiet for up to a pass; judged at until_ms, all would look dead. Beyond the allowed lag
    (collector down, or every link dead) the window end counts again.
    """
    newest = arrivals.agg(F.max("arrival_ms")).first()
    newest_ms = newest[0] if newest is not None and newest[0] is not None else None
    if newest_ms is None:
        return until_ms
    return min(until_ms, max(int(newest_ms), until_ms - int(collection_lag_s * 1000)))


# A link as the topology graph draws it: an edge between two clusters, named by its flow, marked when dead.
LINK_FIELDS = ("flow", "source", "target", "heartbeats", "configured", "observed", "dead", "silent", "unconfigured")


def _topology_summary(detail: dict[str, DataFrame], links: DataFrame) -> Summary:
    matrix: dict[str, dict[str, int]] = {}
    for row in detail["hops"].collect():
        matrix.setdefault(row.origin, {})[row.destination] = row.hops
    flags = {
        name: sorted(r.flow for r in links.where(F.col(name)).collect()) for name in ("dead", "silent", "unconfigured")
    }
    arrivals = sum(r.arrivals for r in detail["paths"].collect())
    log.info("topology: %d heartbeat arrivals processed", arrivals)
    return {
        "heartbeat_arrivals": arrivals,
        "nodes": sorted(r.cluster for r in detail["nodes"].collect()),
        "hops": matrix,
        "cycles": [r.cycle for r in detail["cycles"].orderBy("cycle").collect()],
        "diamonds": _rows(detail["diamonds"].orderBy("origin", "destination")),
        "dead_links": flags["dead"],
        "silent_flows": flags["silent"],
        "unconfigured_flows": flags["unconfigured"],
        "links": _rows(links.select(*LINK_FIELDS).orderBy("source", "target")),
    }


# -- audit -----------------------------------------------------------------------------------------------------
# Per flow and window: what the flow page charts (records complete, missing and duplicated per window).
AUDIT_SERIES = ("source_records", "complete", "missing", "duplicates", "late")


def run_audit(job: Job) -> Summary:
    o = job.options
    lookback = job.since - timedelta(minutes=o.lookback_minutes) if job.since else None
    facts = read_facts(job.spark, job.lake, lookback, job.until)
    log.info("audit: stage 1/2 windows of %d min", o.window_minutes)
    detail = job.write({"windows": audit.windows(facts, o.window_minutes, o.late_after_ms, epoch_ms(job.since))})
    log.info("audit: stage 2/2 summary")
    windows = detail["windows"]
    total = audit.totals(windows).first()
    sums = {k: v or 0 for k, v in (total.asDict() if total is not None else {}).items()}
    flagged = windows.where("loss").orderBy("flow", "topic", "partition", "window_start").limit(100)
    loss = flagged.select("flow", "topic", "partition", _iso("window_start"), "missing", "missing_offsets")
    source = sums.get("source_records", 0)
    # None, not 100 %: with no source records there is nothing to be complete about.
    completeness = round((source - sums.get("missing", 0)) * 100.0 / source, 3) if source else None
    log.info("audit: %d windows, %d records processed", sums.get("windows", 0), sums.get("target_records", 0))
    per_flow = audit.per_flow(windows).orderBy("flow", "window_start")
    series = per_flow.select("flow", _iso("window_start"), _iso("window_end"), *AUDIT_SERIES)
    return sums | {"completeness_pct": completeness, "loss": _rows(loss), "series": _rows(series)}


RUNNERS: dict[str, Callable[[Job], Summary]] = {"latency": run_latency, "topology": run_topology, "audit": run_audit}
JOBS = JOB_NAMES  # the options module names the jobs, so that validating needs no Spark; RUNNERS has one for each
