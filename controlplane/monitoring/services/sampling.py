"""The flow time series: one FlowSample per flow per sampler tick, and the live throughput over recent samples."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime, timedelta
from itertools import pairwise

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from controlplane.flows.models import Flow
from controlplane.monitoring.models import FlowSample
from controlplane.monitoring.services.health import FlowTotals, health, totals
from controlplane.orchestration.services.status import flow_status, flow_statuses
from controlplane.orchestration.taskstatus import FlowStatus

log = logging.getLogger(__name__)

# The live rate's window. Tasks report their record counts every few seconds, so a counter read at any moment is
# a staircase; over a minute of samples one step of error is under a tenth of the rate.
RATE_WINDOW_SECONDS = 60.0

Point = tuple[datetime, int, float | None]  # a sample's time, record count and its own records/s


def sample_flows(now: datetime | None = None) -> int:
    """Take one sample of every flow and drop samples past retention; returns how many were taken."""
    now = now or timezone.now()
    flows = list(Flow.objects.select_related("source", "target"))
    statuses = flow_statuses(flows)
    recent = _recent_samples([f.pk for f in flows], now)
    taken = 0
    for flow in flows:
        try:
            with transaction.atomic():
                sample_flow(flow, now, statuses[flow.pk], recent.get(flow.pk, []))
        except IntegrityError:  # deleted since it was listed (a REST client may delete flows at any moment)
            log.info("flow %s was deleted while it was sampled; its sample is dropped", flow.pk)
            continue
        taken += 1
    cutoff = now - timedelta(hours=settings.MIRRORPLANE_SAMPLE_RETENTION_HOURS)
    FlowSample.objects.filter(at__lt=cutoff).delete()
    return taken


def sample_flow(
    flow: Flow, now: datetime, status: FlowStatus | None = None, recent: list[Point] | None = None
) -> FlowSample:
    status = status or flow_status(flow)
    flow_totals = totals(status)
    if recent is None:
        recent = _recent_samples([flow.pk], now).get(flow.pk, [])
    return FlowSample.objects.create(
        flow=flow,
        at=now,
        records=flow_totals.records,
        records_per_second=sample_rate(recent, flow_totals.records, now),
        lag=flow_totals.lag,
        latency_p99_ms=flow_totals.latency_p99_ms,
        health=health(status, flow_totals),
    )


def sample_rate(recent: list[Point], records: int, now: datetime) -> float | None:
    """A new sample's records/s (the flow's history chart): its count with the last minute's samples, read as the
    live rate reads them. Not the difference from the previous sample alone: tasks report their counts every few
    seconds, so a tick that fell before a task's report read 0 and the next one twice the rate. None (no data, not
    0) with no earlier sample in the window, or none since a gap in the samples."""
    points = since_last_gap([*recent, (now, records, None)])
    if len(points) < 2:
        return None
    return _rate_of(points, now)


def live_rate(flow: Flow, flow_totals: FlowTotals, now: datetime) -> float:
    """Throughput for the graph, tiles and flow list: the samples' counter growth over the last minute.

    Not the live counter against the last sample: the counter moves in steps every few seconds, so that ratio
    swings between 0 and several times the real rate. ``flow_totals`` (the live counter) is not used for this.
    """
    return live_rates([flow], now)[flow.pk]


def live_rates(flows: Sequence[Flow], now: datetime) -> dict[int, float]:
    """``live_rate`` of many flows, from one query of their recent samples."""
    samples = _recent_samples([f.pk for f in flows], now)
    return {f.pk: _rate_of(samples.get(f.pk, []), now) for f in flows}


def _recent_samples(flow_ids: list[int], now: datetime) -> dict[int, list[Point]]:
    """Each flow's samples of the rate window up to now, oldest first: one query for any number of flows."""
    since = now - timedelta(seconds=RATE_WINDOW_SECONDS)
    recent = FlowSample.objects.filter(flow_id__in=flow_ids, at__gte=since, at__lte=now).order_by("flow_id", "at")
    samples: dict[int, list[Point]] = {}
    for flow_id, at, records, records_per_second in recent.values_list(
        "flow_id", "at", "records", "records_per_second"
    ):
        samples.setdefault(flow_id, []).append((at, records, records_per_second))
    return samples


def _rate_of(samples: list[Point], now: datetime) -> float:
    if not samples:
        return 0.0  # no recent sample: the sampler or the flow is not running
    last_at, _, last_rate = samples[-1]
    if (now - last_at).total_seconds() > 3 * settings.MIRRORPLANE_SAMPLE_INTERVAL_SECONDS:
        return 0.0
    samples = since_last_gap(samples)
    if stopped(samples):
        return 0.0
    windowed = window_rate([(at, records) for at, records, _ in samples])
    if windowed is not None:
        return windowed
    return last_rate or 0.0  # one sample so far (a new flow): its own rate, if it has one


def since_last_gap(samples: list[Point]) -> list[Point]:
    """The samples after the last gap of over three sample intervals (the sampler or the demo was stopped): a
    window across the gap would spread the growth after it over time with no samples, and read low."""
    gap = 3 * settings.MIRRORPLANE_SAMPLE_INTERVAL_SECONDS
    start = len(samples) - 1
    while start > 0 and (samples[start][0] - samples[start - 1][0]).total_seconds() <= gap:
        start -= 1
    return samples[start:]


def stopped(samples: Sequence[Point]) -> bool:
    """No growth over two task-report or sampler intervals (whichever is longer), so at least one task report
    came in between: the flow stopped (paused producers), and says 0 now rather than fade out over a minute."""
    report_seconds = settings.MIRRORPLANE_LEASE_SECONDS / 3  # tasks report their counts with each lease renewal
    span = 2 * max(float(settings.MIRRORPLANE_SAMPLE_INTERVAL_SECONDS), report_seconds)
    last_at, last_records, _ = samples[-1]
    # 0.9: the sampler's ticks jitter; a tick a little late must not hide a stop
    earlier = [records for at, records, _ in samples if (last_at - at).total_seconds() >= 0.9 * span]
    return bool(earlier) and earlier[-1] == last_records


def window_rate(points: Sequence[tuple[datetime, int]]) -> float | None:
    """Records per second over (time, cumulative count) points in time order: the count's growth from the first
    point to the last over their time span. A count that drops restarted with a task: its new value is growth.
    None with fewer than two points or no time between them."""
    if len(points) < 2:
        return None
    seconds = (points[-1][0] - points[0][0]).total_seconds()
    if seconds <= 0:
        return None
    grown = sum(count - before if count >= before else count for (_, before), (_, count) in pairwise(points))
    return round(grown / seconds, 1)


def history(flow: Flow, minutes: int, now: datetime | None = None) -> list[FlowSample]:
    since = (now or timezone.now()) - timedelta(minutes=minutes)
    return list(FlowSample.objects.filter(flow=flow, at__gte=since).order_by("at"))
