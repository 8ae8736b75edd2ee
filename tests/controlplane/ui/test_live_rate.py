"""The live records/s (graph edges, tiles, flow list) over a window of samples, not one counter difference."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from django.utils import timezone

from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from controlplane.monitoring.models import FlowSample
from controlplane.monitoring.services.health import FlowTotals
from controlplane.monitoring.services.sampling import live_rate, window_rate

RATE = 100.0  # records per second really replicated
REPORT_SECONDS = 5.2  # tasks report their counts about every 5 s: the counter is a staircase
SAMPLE_SECONDS = 5.0


def counter(seconds: float) -> int:
    """The flow's record count as the status shows it `seconds` after start: the value of the last report."""
    last_report = (seconds // REPORT_SECONDS) * REPORT_SECONDS
    return int(RATE * last_report)


def live(records: int) -> FlowTotals:
    return FlowTotals(records=records, lag=0, latency_p99_ms=None, partitions=1, errors=[], unplaced=[])


@pytest.fixture
def flow() -> Flow:
    source = Cluster.objects.create(alias="us-west", bootstrap_servers="us-west:9092")
    target = Cluster.objects.create(alias="us-east", bootstrap_servers="us-east:9092")
    return Flow.objects.create(source=source, target=target)


def sample_for(flow: Flow, start: datetime, seconds: float) -> None:
    """The sampler's ticks over `seconds`: each stores the counter as the status shows it then."""
    tick = SAMPLE_SECONDS
    while tick <= seconds:
        FlowSample.objects.create(
            flow=flow, at=start + timedelta(seconds=tick), records=counter(tick), health="healthy"
        )
        tick += SAMPLE_SECONDS


@pytest.mark.django_db
def test_the_live_rate_stays_near_the_real_rate_at_any_moment_between_samples(flow: Flow) -> None:
    start = timezone.now() - timedelta(minutes=10)
    sample_for(flow, start, 300)
    rates = []
    for tenth in range(0, 50):  # every 0.1 s across the 5 s after the last sample
        seconds = 300 + tenth / 10
        rates.append(live_rate(flow, live(counter(seconds)), start + timedelta(seconds=seconds)))
    # The old "counter now minus the last sample over the seconds between" gave 0 and up to 50x the rate here.
    assert min(rates) >= 0.9 * RATE and max(rates) <= 1.1 * RATE, (min(rates), max(rates))


@pytest.mark.django_db
def test_a_stopped_counter_reads_zero_within_two_sample_intervals_not_a_minute(flow: Flow) -> None:
    start = timezone.now() - timedelta(minutes=10)
    sample_for(flow, start, 300)  # 100 records/s for 5 minutes, then the producers stop
    stopped = counter(300)
    for tick in (305, 310):
        FlowSample.objects.create(flow=flow, at=start + timedelta(seconds=tick), records=stopped, health="healthy")
    assert live_rate(flow, live(stopped), start + timedelta(seconds=306)) > 0.5 * RATE  # one flat interval: aliasing
    assert live_rate(flow, live(stopped), start + timedelta(seconds=311)) == 0.0


@pytest.mark.django_db
def test_slow_task_reports_never_read_as_a_stop(flow: Flow, settings: Any) -> None:
    settings.MIRRORPLANE_LEASE_SECONDS = 60  # tasks report every 20 s: the count stays put over three samples
    start = timezone.now() - timedelta(minutes=10)
    for tick in range(5, 305, 5):
        records = int(RATE * (tick // 20) * 20)
        FlowSample.objects.create(flow=flow, at=start + timedelta(seconds=tick), records=records, health="healthy")
    rates = [live_rate(flow, live(0), start + timedelta(seconds=t + 1)) for t in range(120, 300, 5)]
    assert min(rates) > 0.5 * RATE, rates


@pytest.mark.django_db
def test_no_recent_sample_means_no_rate_and_one_sample_gives_its_own(flow: Flow) -> None:
    now = timezone.now()
    assert live_rate(flow, live(0), now) == 0.0
    FlowSample.objects.create(flow=flow, at=now - timedelta(seconds=2), records=10, records_per_second=7.5)
    assert live_rate(flow, live(10), now) == 7.5
    assert live_rate(flow, live(10), now + timedelta(minutes=5)) == 0.0  # the sampler stopped: stale


def test_a_window_counts_a_task_restart_as_growth_from_zero() -> None:
    t0 = timezone.now()
    points = [(t0, 1000), (t0 + timedelta(seconds=10), 2000), (t0 + timedelta(seconds=20), 500)]
    assert window_rate(points) == (1000 + 500) / 20
    assert window_rate(points[:1]) is None
    assert window_rate([(t0, 1), (t0, 2)]) is None
