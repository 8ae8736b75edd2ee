"""The flow time series: one FlowSample per flow per sampler tick, and the live throughput over recent samples."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from itertools import pairwise

from django.conf import settings
from django.utils import timezone

from controlplane.flows.models import Flow
from controlplane.monitoring.models import FlowSample
from controlplane.monitoring.services.health import FlowTotals, health, totals
from controlplane.orchestration.services.status import flow_status, flow_statuses
from controlplane.orchestration.taskstatus import FlowStatus

# The live rate's window. Tasks report their record counts every few seconds, so a counter read at any moment is
# a staircase; over a minute of samples one step of error is under a tenth of the rate.
RATE_WINDOW_SECONDS = 60.0


def sample_flows(now: datetime | None = None) -> int:
    """Take one sample of every flow and drop samples past retention; returns how many were taken."""
    now = now or timezone.now()
    flows = list(Flow.objects.select_related("source", "target"))
    statuses = flow_statuses(flows)
    for flow in flows:
        sample_flow(flow, now, statuses[flow.pk])
    cutoff = now - timedelta(hours=settings.MIRRORPLANE_SAMPLE_RETENTION_HOURS)
    FlowSample.objects.filter(at__lt=cutoff).delete()
    return len(flows)


def sample_flow(flow: Flow, now: datetime, status: FlowStatus | None = None) -> FlowSample:
    status = status or flow_status(flow)
    flow_totals = totals(status)
    previous = FlowSample.objects.filter(flow=flow).order_by("-at").first()
    return FlowSample.objects.create(
        flow=flow,
        at=now,
        records=flow_totals.records,
        records_per_second=rate(previous, flow_totals.records, now),
        lag=flow_totals.lag,
        latency_p99_ms=flow_totals.latency_p99_ms,
        health=health(status, flow_totals),
    )


def rate(previous: FlowSample | None, records: int, now: datetime) -> float:
    """Records per second since the previous sample. The count restarts with a task, so a drop means the new
    task's count is all there is to go by."""
    if previous is None:
        return 0.0
    seconds = (now - previous.at).total_seconds()
    if seconds <= 0:
        return previous.records_per_second
    delta = records - previous.records if records >= previous.records else records
    return round(delta / seconds, 1)


def live_rate(flow: Flow, flow_totals: FlowTotals, now: datetime) -> float:
    """Throughput for the graph, tiles and flow list: the samples' counter growth over the last minute.

    Not the live counter against the last sample: the counter moves in steps every few seconds, so that ratio
    swings between 0 and several times the real rate. ``flow_totals`` (the live counter) is not used for this.
    """
    return live_rates([flow], now)[flow.pk]


def live_rates(flows: Sequence[Flow], now: datetime) -> dict[int, float]:
    """``live_rate`` of many flows, from one query of their recent samples."""
    since = now - timedelta(seconds=RATE_WINDOW_SECONDS)
    recent = FlowSample.objects.filter(flow_id__in=[f.pk for f in flows], at__gte=since, at__lte=now).order_by(
        "flow_id", "at"
    )
    samples: dict[int, list[tuple[datetime, int, float]]] = {}
    for flow_id, at, records, records_per_second in recent.values_list(
        "flow_id", "at", "records", "records_per_second"
    ):
        samples.setdefault(flow_id, []).append((at, records, records_per_second))
    return {f.pk: _rate_of(samples.get(f.pk, []), now) for f in flows}


def _rate_of(samples: list[tuple[datetime, int, float]], now: datetime) -> float:
    if not samples:
        return 0.0  # no recent sample: the sampler or the flow is not running
    last_at, _, last_rate = samples[-1]
    if (now - last_at).total_seconds() > 3 * settings.MIRRORPLANE_SAMPLE_INTERVAL_SECONDS:
        return 0.0
    if stopped(samples):
        return 0.0
    windowed = window_rate([(at, records) for at, records, _ in samples])
    return last_rate if windowed is None else windowed  # one sample so far (a new flow): its own rate


def stopped(samples: Sequence[tuple[datetime, int, float]]) -> bool:
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
