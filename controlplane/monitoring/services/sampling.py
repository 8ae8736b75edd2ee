"""The flow time series: one FlowSample per flow per sampler tick, and the live throughput over recent samples.

Throughput is read from the growth of the partitions' positions (source offsets), summed per flow: records/s
copied over every data partition, and records/s entering replication over the topics that originate at the flow's
source. A chain of two flows copies a stream twice and lets it enter once.
"""

from __future__ import annotations

import logging
import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import pairwise
from typing import Any, NamedTuple

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Avg, Count, Max, Sum
from django.db.models.functions import TruncMinute
from django.utils import timezone

from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from controlplane.monitoring.models import FlowSample
from controlplane.monitoring.services.health import health, totals
from controlplane.orchestration.models import PartitionReport
from controlplane.orchestration.services.status import flow_status, flow_statuses
from controlplane.orchestration.taskstatus import FlowStatus
from replication.config import replication_policy
from replication.mm2.policy import ReplicationPolicy, is_heartbeats_topic, is_internal_topic

log = logging.getLogger(__name__)

# The live rate's window. Tasks report their positions every few seconds, so a sum read at any moment is a
# staircase; over a minute of samples one step of error is under a tenth of the rate.
RATE_WINDOW_SECONDS = 60.0


class Point(NamedTuple):
    """A sample as the rates read it: its time, its sums of positions and their partition count, its own rates."""

    at: datetime
    offsets: int | None
    origin: int | None
    partitions: int | None
    rate: float | None = None
    entering: float | None = None


class Rates(NamedTuple):
    """A flow's records/s: ``copied`` over all its data partitions, ``entering`` over the topics that originate at
    its source (the first hop: a remote topic's records entered replication on an earlier flow)."""

    copied: float
    entering: float


@dataclass(frozen=True)
class Sums:
    """A flow's data partitions' positions summed (source offsets), all and those of its source's own topics."""

    offsets: int = 0
    origin: int = 0
    partitions: int = 0


def sample_flows(now: datetime | None = None) -> int:
    """Take one sample of every flow and drop samples past retention; returns how many were taken."""
    now = now or timezone.now()
    flows = list(Flow.objects.select_related("source", "target"))
    statuses = flow_statuses(flows)
    recent = _recent_samples([f.pk for f in flows], now)
    sums = position_sums(flows)
    taken = 0
    for flow in flows:
        try:
            with transaction.atomic():
                sample_flow(flow, now, statuses[flow.pk], recent.get(flow.pk, []), sums.get(flow.pk, Sums()))
        except IntegrityError:  # deleted since it was listed (a REST client may delete flows at any moment)
            log.info("flow %s was deleted while it was sampled; its sample is dropped", flow.pk)
            continue
        taken += 1
    cutoff = now - timedelta(hours=settings.MIRRORPLANE_SAMPLE_RETENTION_HOURS)
    FlowSample.objects.filter(at__lt=cutoff).delete()
    return taken


def sample_flow(
    flow: Flow,
    now: datetime,
    status: FlowStatus | None = None,
    recent: list[Point] | None = None,
    sums: Sums | None = None,
) -> FlowSample:
    status = status or flow_status(flow)
    flow_totals = totals(status)
    if recent is None:
        recent = _recent_samples([flow.pk], now).get(flow.pk, [])
    if sums is None:
        sums = position_sums([flow]).get(flow.pk, Sums())
    rates = sample_rates(recent, Point(now, sums.offsets, sums.origin, sums.partitions))
    return FlowSample.objects.create(
        flow=flow,
        at=now,
        records=flow_totals.records,
        offsets=sums.offsets,
        origin_offsets=sums.origin,
        partitions=sums.partitions,
        records_per_second=None if rates is None else rates.copied,
        entering_per_second=None if rates is None else rates.entering,
        lag=flow_totals.lag,
        latency_p99_ms=flow_totals.latency_p99_ms,
        health=health(status, flow_totals),
    )


def position_sums(flows: Sequence[Flow]) -> dict[int, Sums]:
    """Each flow's data partitions' positions summed, from one grouped query of the partition rows. A row is keyed by
    partition, not by task, and a position does not restart with a task: a partition moving to another task, a task
    restarting or a paused flow resuming leaves the sum where it was, where per-task record counters drop to 0 or
    count a partition under both tasks while their reports overlap. Heartbeats and internal topics are left out."""
    aliases = set(Cluster.objects.values_list("alias", flat=True))
    policies = {
        f.pk: replication_policy(f.replication_policy_class, f.source.alias, f.replication_policy_separator)
        for f in flows
    }
    rows = (
        PartitionReport.objects.filter(flow_id__in=list(policies), position__isnull=False)
        .values_list("flow_id", "topic")
        .annotate(total=Sum("position"), count=Count("id"))
        .order_by()
    )
    sums: dict[int, Sums] = {}
    for flow_id, topic, total, count in rows:
        policy = policies[flow_id]
        if is_heartbeats_topic(policy, topic) or is_internal_topic(topic):
            continue
        was = sums.get(flow_id, Sums())
        own = total if originates(policy, topic, aliases) else 0
        sums[flow_id] = Sums(was.offsets + total, was.origin + own, was.partitions + count)
    return sums


def originates(policy: ReplicationPolicy, topic: str, aliases: set[str]) -> bool:
    """Whether the topic's records enter replication here: it is not a remote topic of a known cluster. An identity
    policy's remote topics keep their names, so under it every topic counts as its source's own."""
    upstream = policy.upstream_topic(topic)
    return upstream is None or upstream == topic or policy.topic_source(topic) not in aliases


def sample_rates(recent: list[Point], point: Point) -> Rates | None:
    """A new sample's rates (the flow's history chart): its sums with the last minute's samples, read as the live
    rate reads them. None (no data, not 0) with no earlier sample in the window, or none since a gap."""
    points = since_last_gap([*recent, point])
    if window_rate(points) is None:
        return None
    return _rates_of(points, point.at)


def live_rate(flow: Flow, now: datetime) -> Rates:
    """Throughput for the graph, tiles and flow list: the samples' growth of positions over the last minute.

    Not the live figures against the last sample: tasks report every few seconds, so that ratio swings between 0
    and several times the real rate.
    """
    return live_rates([flow], now)[flow.pk]


def live_rates(flows: Sequence[Flow], now: datetime) -> dict[int, Rates]:
    """``live_rate`` of many flows, from one query of their recent samples."""
    samples = _recent_samples([f.pk for f in flows], now)
    return {f.pk: _rates_of(samples.get(f.pk, []), now) for f in flows}


def _recent_samples(flow_ids: list[int], now: datetime) -> dict[int, list[Point]]:
    """Each flow's samples of the rate window up to now, oldest first: one query for any number of flows."""
    since = now - timedelta(seconds=RATE_WINDOW_SECONDS)
    recent = FlowSample.objects.filter(flow_id__in=flow_ids, at__gte=since, at__lte=now).order_by("flow_id", "at")
    samples: dict[int, list[Point]] = {}
    for flow_id, at, offsets, origin, partitions, rate, entering in recent.values_list(
        "flow_id", "at", "offsets", "origin_offsets", "partitions", "records_per_second", "entering_per_second"
    ):
        samples.setdefault(flow_id, []).append(Point(at, offsets, origin, partitions, rate, entering))
    return samples


def _rates_of(samples: list[Point], now: datetime) -> Rates:
    if not samples:
        return Rates(0.0, 0.0)  # no recent sample: the sampler or the flow is not running
    last = samples[-1]
    if (now - last.at).total_seconds() > 3 * settings.MIRRORPLANE_SAMPLE_INTERVAL_SECONDS:
        return Rates(0.0, 0.0)
    samples = since_last_gap(samples)
    copied = 0.0 if stopped(samples, "offsets") else window_rate(samples, "offsets")
    entering = 0.0 if stopped(samples, "origin") else window_rate(samples, "origin")
    if copied is None:  # one sample so far (a new flow): its own rates, if it has them
        return Rates(last.rate or 0.0, last.entering or 0.0)
    return Rates(copied, entering or 0.0)


def since_last_gap(samples: list[Point]) -> list[Point]:
    """The samples after the last gap of over three sample intervals (the sampler or the demo was stopped): a
    window across the gap would spread the growth after it over time with no samples, and read low."""
    gap = 3 * settings.MIRRORPLANE_SAMPLE_INTERVAL_SECONDS
    start = len(samples) - 1
    while start > 0 and (samples[start].at - samples[start - 1].at).total_seconds() <= gap:
        start -= 1
    return samples[start:]


def stopped(samples: Sequence[Point], field: str = "offsets") -> bool:
    """No growth over two task-report or sampler intervals (whichever is longer), so at least one task report
    came in between: the flow stopped (paused producers), and says 0 now rather than fade out over a minute."""
    report_seconds = settings.MIRRORPLANE_LEASE_SECONDS / 3  # tasks report their positions with each lease renewal
    span = 2 * max(float(settings.MIRRORPLANE_SAMPLE_INTERVAL_SECONDS), report_seconds)
    last = samples[-1]
    # 0.9: the sampler's ticks jitter; a tick a little late must not hide a stop
    earlier = [getattr(p, field) for p in samples if (last.at - p.at).total_seconds() >= 0.9 * span]
    return bool(earlier) and earlier[-1] == getattr(last, field)


def window_rate(points: Sequence[Point], field: str = "offsets") -> float | None:
    """Records per second over samples in time order: the growth of a sum of positions between consecutive samples
    over the seconds between them, only where both cover the same number of partitions (a partition that appears
    brings its whole position, one that goes takes it away: neither is growth, so that step is left out). A sum
    that drops (a task resumed from a stored position a little behind its last report) grew 0. None with no two
    comparable samples or no time between them."""
    grown, seconds = 0, 0.0
    for before, after in pairwise(points):
        start, end = getattr(before, field), getattr(after, field)
        if start is None or end is None or before.partitions != after.partitions:
            continue
        grown += max(0, end - start)
        seconds += (after.at - before.at).total_seconds()
    return round(grown / seconds, 1) if seconds > 0 else None


# A chart's points at most: 24 hours of 5 s samples would be 17,280 rows a refresh.
HISTORY_POINTS = 720
HISTORY_FIELDS = ("at", "records", "records_per_second", "entering_per_second", "lag", "latency_p99_ms", "health")


@dataclass(frozen=True)
class History:
    """A flow's samples between since and until, oldest first; merged per bucket_seconds when there were more than
    HISTORY_POINTS (0: every sample as taken)."""

    since: datetime
    until: datetime
    bucket_seconds: int
    samples: list[dict[str, Any]]


def history(flow: Flow, since: datetime, until: datetime, points: int = HISTORY_POINTS) -> History:
    rows = list(
        FlowSample.objects.filter(flow=flow, at__gte=since, at__lte=until).order_by("at").values(*HISTORY_FIELDS)
    )
    if len(rows) <= points:
        return History(since, until, 0, rows)
    width = max(1, math.ceil((until - since).total_seconds() / points))
    buckets: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        buckets.setdefault(int((row["at"] - since).total_seconds()) // width, []).append(row)
    return History(since, until, width, [_merged(bucket) for bucket in buckets.values()])


def _merged(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One point for a bucket of samples: rates averaged, lag and p99 at their highest (a peak stays visible), the
    cumulative count and the health as the bucket ended."""
    last = rows[-1]

    def mean(key: str) -> float | None:
        values = [r[key] for r in rows if r[key] is not None]
        return round(sum(values) / len(values), 1) if values else None

    def peak(key: str) -> Any:
        values = [r[key] for r in rows if r[key] is not None]
        return max(values) if values else None

    return {
        "at": last["at"],
        "records": last["records"],
        "records_per_second": mean("records_per_second"),
        "entering_per_second": mean("entering_per_second"),
        "lag": peak("lag"),
        "latency_p99_ms": peak("latency_p99_ms"),
        "health": last["health"],
    }


# Over a longer window the totals read each flow's samples merged per minute by the database, not every sample.
TOTALS_RAW_MINUTES = 60
TOTALS_FIELDS = ("records_per_second", "entering_per_second", "lag")


@dataclass(frozen=True)
class TotalHistory:
    """All flows together between since and until, one point per bucket of bucket_seconds, oldest first.

    Each point sums, over the flows with a sample in the bucket, each flow's mean records/s (copied and entering)
    and its highest lag; ``flows`` says how many flows that was, so a flow without samples is not counted out
    silently. A sum over no flow with a value is None (no data), not 0."""

    since: datetime
    until: datetime
    bucket_seconds: int
    samples: list[dict[str, Any]]


def total_history(since: datetime, until: datetime, points: int = HISTORY_POINTS) -> TotalHistory:
    seconds = (until - since).total_seconds()
    window = FlowSample.objects.filter(at__gte=since, at__lte=until)
    if seconds <= TOTALS_RAW_MINUTES * 60:
        step = max(1, int(settings.MIRRORPLANE_SAMPLE_INTERVAL_SECONDS))
        rows = list(window.values("flow_id", "at", *TOTALS_FIELDS))
    else:
        step = 60
        rows = list(
            window.annotate(minute=TruncMinute("at"))
            .values("flow_id", "minute")
            .annotate(
                records_per_second=Avg("records_per_second"),
                entering_per_second=Avg("entering_per_second"),
                lag=Max("lag"),
            )
            .values("flow_id", "minute", *TOTALS_FIELDS)
        )
        for row in rows:
            row["at"] = row.pop("minute")
    width = max(step, math.ceil(seconds / points))
    buckets: dict[int, dict[int, list[dict[str, Any]]]] = {}
    for row in rows:
        # A minute that began before since counts in the first bucket.
        buckets.setdefault(max(0, int((row["at"] - since).total_seconds()) // width), {}).setdefault(
            row["flow_id"], []
        ).append(row)
    return TotalHistory(since, until, width, [_total(buckets[n]) for n in sorted(buckets)])


def _total(flows: dict[int, list[dict[str, Any]]]) -> dict[str, Any]:
    """One bucket's point, at its newest sample."""

    def summed(key: str, merge: Callable[[list[float]], float]) -> float | None:
        values = [merge(found) for rows in flows.values() if (found := [r[key] for r in rows if r[key] is not None])]
        return round(sum(values), 1) if values else None

    return {
        "at": max(r["at"] for rows in flows.values() for r in rows),
        "flows": len(flows),
        "records_per_second": summed("records_per_second", statistics.fmean),
        "entering_per_second": summed("entering_per_second", statistics.fmean),
        "lag": summed("lag", max),
    }
