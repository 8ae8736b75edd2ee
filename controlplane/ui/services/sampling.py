"""The flow time series: one FlowSample per flow per sampler tick, and the live throughput between ticks."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from controlplane.flows.models import Flow
from controlplane.orchestration.services.status import flow_status
from controlplane.ui.models import FlowSample
from controlplane.ui.services.health import FlowTotals, health, totals


def sample_flows(now: datetime | None = None) -> int:
    """Take one sample of every flow and drop samples past retention; returns how many were taken."""
    now = now or timezone.now()
    flows = list(Flow.objects.select_related("source", "target"))
    for flow in flows:
        sample_flow(flow, now)
    cutoff = now - timedelta(hours=settings.MIRRORPLANE_SAMPLE_RETENTION_HOURS)
    FlowSample.objects.filter(at__lt=cutoff).delete()
    return len(flows)


def sample_flow(flow: Flow, now: datetime) -> FlowSample:
    status = flow_status(flow)
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
    """Throughput for the graph: since the last sample if it is recent, else that sample's own rate."""
    last = FlowSample.objects.filter(flow=flow).order_by("-at").first()
    if last is None:
        return 0.0
    stale = (now - last.at).total_seconds() > 3 * settings.MIRRORPLANE_SAMPLE_INTERVAL_SECONDS
    if stale:
        return 0.0
    if (now - last.at).total_seconds() < 1.0 or flow_totals.records < last.records:
        return last.records_per_second
    return rate(last, flow_totals.records, now)


def history(flow: Flow, minutes: int, now: datetime | None = None) -> list[FlowSample]:
    since = (now or timezone.now()) - timedelta(minutes=minutes)
    return list(FlowSample.objects.filter(flow=flow, at__gte=since).order_by("at"))
