"""The live records/s (graph edges, tiles, flow list) over a window of samples of the flow's summed partition
positions, not one difference."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from django.utils import timezone

from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from controlplane.monitoring.models import FlowSample
from controlplane.monitoring.services.sampling import Point, Sums, live_rate, sample_flow, window_rate
from controlplane.orchestration.taskstatus import FlowStatus, TaskStatus

RATE = 100.0  # records per second really replicated
REPORT_SECONDS = 5.2  # tasks report their counts about every 5 s: the counter is a staircase
SAMPLE_SECONDS = 5.0


def counter(seconds: float) -> int:
    """The flow's summed positions as the reports show them `seconds` after start: the value of the last report."""
    last_report = (seconds // REPORT_SECONDS) * REPORT_SECONDS
    return int(RATE * last_report)


def sample(flow: Flow, at: datetime, offsets: int, **fields: Any) -> FlowSample:
    return FlowSample.objects.create(
        flow=flow, at=at, offsets=offsets, origin_offsets=offsets, partitions=1, health="healthy", **fields
    )


def sums(offsets: int) -> Sums:
    return Sums(offsets, offsets, 1)


@pytest.fixture
def flow() -> Flow:
    source = Cluster.objects.create(alias="us-west", bootstrap_servers="us-west:9092")
    target = Cluster.objects.create(alias="us-east", bootstrap_servers="us-east:9092")
    return Flow.objects.create(source=source, target=target)


def sample_for(flow: Flow, start: datetime, seconds: float) -> None:
    """The sampler's ticks over `seconds`: each stores the counter as the status shows it then."""
    tick = SAMPLE_SECONDS
    while tick <= seconds:
        sample(flow, start + timedelta(seconds=tick), counter(tick))
        tick += SAMPLE_SECONDS


@pytest.mark.django_db
def test_the_live_rate_stays_near_the_real_rate_at_any_moment_between_samples(flow: Flow) -> None:
    start = timezone.now() - timedelta(minutes=10)
    sample_for(flow, start, 300)
    rates = []
    for tenth in range(0, 50):  # every 0.1 s across the 5 s after the last sample
        seconds = 300 + tenth / 10
        rates.append(live_rate(flow, start + timedelta(seconds=seconds)).copied)
    # The old "counter now minus the last sample over the seconds between" gave 0 and up to 50x the rate here.
    assert min(rates) >= 0.9 * RATE and max(rates) <= 1.1 * RATE, (min(rates), max(rates))


@pytest.mark.django_db
def test_a_stopped_counter_reads_zero_within_two_sample_intervals_not_a_minute(flow: Flow) -> None:
    start = timezone.now() - timedelta(minutes=10)
    sample_for(flow, start, 300)  # 100 records/s for 5 minutes, then the producers stop
    stopped = counter(300)
    for tick in (305, 310):
        sample(flow, start + timedelta(seconds=tick), stopped)
    assert live_rate(flow, start + timedelta(seconds=306)).copied > 0.5 * RATE  # one flat interval: aliasing
    assert live_rate(flow, start + timedelta(seconds=311)) == (0.0, 0.0)


@pytest.mark.django_db
def test_slow_task_reports_never_read_as_a_stop(flow: Flow, settings: Any) -> None:
    settings.MIRRORPLANE_LEASE_SECONDS = 60  # tasks report every 20 s: the count stays put over three samples
    start = timezone.now() - timedelta(minutes=10)
    for tick in range(5, 305, 5):
        sample(flow, start + timedelta(seconds=tick), int(RATE * (tick // 20) * 20))
    rates = [live_rate(flow, start + timedelta(seconds=t + 1)).copied for t in range(120, 300, 5)]
    assert min(rates) > 0.5 * RATE, rates


@pytest.mark.django_db
def test_no_recent_sample_means_no_rate_and_one_sample_gives_its_own(flow: Flow) -> None:
    now = timezone.now()
    assert live_rate(flow, now) == (0.0, 0.0)
    sample(flow, now - timedelta(seconds=2), 10, records_per_second=7.5, entering_per_second=2.5)
    assert live_rate(flow, now) == (7.5, 2.5)
    assert live_rate(flow, now + timedelta(minutes=5)) == (0.0, 0.0)  # the sampler stopped: stale


def test_a_window_leaves_out_a_step_where_partitions_came_or_went_and_reads_a_drop_as_no_growth() -> None:
    """Positions are keyed by partition: a partition that appears brings its whole position (not growth), and a
    task resuming from a stored position a little behind its predecessor's last report steps back (not a restart
    from 0, which per-task record counters read as the whole count again)."""
    t0 = timezone.now()

    def at(seconds: int, offsets: int, partitions: int = 1) -> Point:
        return Point(t0 + timedelta(seconds=seconds), offsets, offsets, partitions)

    points = [at(0, 1000), at(10, 2000), at(20, 1990), at(30, 2990), at(40, 9000, 2), at(50, 10_000, 2)]
    assert window_rate(points) == (1000 + 0 + 1000 + 1000) / 40
    assert window_rate(points[:1]) is None
    assert window_rate([at(0, 1), at(10, 2, 2)]) is None
    assert window_rate([at(0, 1), at(0, 2)]) is None


@pytest.mark.django_db
def test_the_history_chart_never_reads_0_or_double_while_the_rate_is_steady(flow: Flow) -> None:
    """The sampler's own samples (the flow's throughput chart): with reports every 5.2 s and ticks every 5 s, one
    tick in about 25 sees no new report. The old difference from the previous sample read 0.0 there and 2x next."""
    start = timezone.now() - timedelta(minutes=10)
    for tick in range(5, 305, 5):
        sample_flow(flow, start + timedelta(seconds=tick), _status_with(0), sums=sums(counter(tick)))
    charted = [s.records_per_second for s in FlowSample.objects.filter(flow=flow).order_by("at")]
    after_a_minute = charted[12:]
    assert min(after_a_minute) >= 0.9 * RATE and max(after_a_minute) <= 1.1 * RATE, after_a_minute


def _status_with(records: int) -> FlowStatus:
    running = TaskStatus(task_id=0, state="RUNNING", live=True, partition_count=1, lag=0, records=records)
    return FlowStatus(flow=0, name="us-west->us-east", tasks=(running,))


@pytest.mark.django_db
def test_after_a_gap_in_the_samples_the_rate_counts_only_what_came_after_it(flow: Flow) -> None:
    """The demo stopped for 40 s and started again: the samples before the gap are in the minute's window, but the
    time without samples must not dilute the rate (it read 23/s at a steady 41/s on the demo)."""
    start = timezone.now() - timedelta(minutes=10)
    for tick in range(5, 65, 5):  # a minute at 100/s
        sample(flow, start + timedelta(seconds=tick), 100 * tick)
    restarted = start + timedelta(seconds=100)  # 40 s without samples
    assert sample_flow(flow, restarted, _status_with(0), sums=sums(9000)).records_per_second is None  # since the gap
    for step in range(1, 4):
        sampled = sample_flow(
            flow, restarted + timedelta(seconds=5 * step), _status_with(0), sums=sums(9000 + 500 * step)
        )
        assert sampled.records_per_second == RATE, step
