"""Step 3, the drain: wait until the lag of the source partitions the failover's groups read is at most the
threshold, and say how it is going.

What is measured: the partitions the groups have committed offsets on in the source, within the flow's topics (its
topics filter). Only their records matter to the groups that move; the flow's other topics may keep
being written by producers of other applications, and a drain over the whole flow would wait for them forever.

Each run (the wizard polls it) adds a sample of that lag and of those partitions' source end offsets to a short trend
kept with the result. From it: the lag's rate of change, an ETA, and whether the source producers are still writing
to those partitions, which is why a drain to 0 does not complete under live traffic: a lag of 0 read between two
fetches says nothing while the producers still write, so a drain to 0 also waits for the end offsets to stop moving.
"""

from __future__ import annotations

import time
from typing import Any

from controlplane.failover.models import Failover
from controlplane.failover.results import DrainPartition, DrainResult, DrainSample
from controlplane.failover.services import context, kafka, mm2
from controlplane.flows.models import Flow
from controlplane.flows.services import flow_config
from controlplane.orchestration.models import PartitionReport
from replication.config import FlowConfig
from replication.mm2.filters import TopicFilter
from replication.mm2.policy import is_heartbeats_topic
from replication.offsets.groupoffsets import Partition

TREND_SAMPLES = 30
RATE_WINDOW_SECONDS = 60.0


def drain_step(failover: Failover, inputs: dict[str, Any]) -> tuple[DrainResult, bool]:
    """Complete once the lag of the groups' partitions is at most the threshold; the UI polls it for the progress
    bar and trend."""
    flow = context.flows(failover).forward
    pair = mm2.records(failover) if flow is None else None
    if flow is None and pair is None:
        return DrainResult(error="the flow from the source to the target no longer exists", waiting=True), False
    config = flow_config(flow) if flow is not None else pair
    assert config is not None
    previous = failover.result(DrainResult)
    wanted, partitions_error = _group_partitions(failover, config, previous)
    ends, source_error = _source_ends(failover, wanted)
    # Without a Mirrorplane flow, MirrorMaker 2's committed source positions tell how far it replicated.
    measured = _measured(flow, wanted, ends) if flow is not None else mm2.measured(failover, config, wanted, ends)
    lag = _lag(measured, partitions_error)
    end = sum(ends.values()) if ends else None
    threshold = failover.drain_threshold
    initial = previous.initial_lag if previous.initial_lag is not None else lag
    trend = (*previous.trend, DrainSample(round(time.time(), 1), lag, end))[-TREND_SAMPLES:]
    # The lag metric moves in steps (tasks report every few seconds): its rate is taken over the last minute. End
    # offsets are exact: their rate since the previous check says whether the producers write right now.
    lag_rate = _rate([(s.at, s.lag) for s in trend], RATE_WINDOW_SECONDS)
    write_rate = _rate([(s.at, s.source_end) for s in trend], 0.0)
    done = lag is not None and lag <= threshold and (threshold > 0 or _still(trend))
    progress = 1.0 if done else (0.0 if not initial or lag is None else max(0.0, 1 - lag / max(initial, 1)))
    result = DrainResult(
        lag=lag,
        initial_lag=initial,
        threshold=threshold,
        progress=round(progress, 3),
        waiting=not done,
        trend=trend,
        partitions=measured,
        partitions_error=partitions_error,
        lag_rate=lag_rate,
        source_write_rate=write_rate,
        producers_writing=write_rate is not None and write_rate > 0,
        eta_seconds=0 if done else _eta(lag, threshold, lag_rate),
        source_error=source_error,
        why=None if done else _why(lag, threshold, lag_rate, write_rate, measured, partitions_error, flow is None),
    )
    return result, done


def _group_partitions(failover: Failover, config: FlowConfig, previous: DrainResult) -> tuple[list[Partition], str]:
    """The source partitions the failover's groups committed on, of the topics the flow replicates (its topics
    filter, as the data plane applies it; heartbeats are replication's own). A partition of those topics that no
    task reported yet is kept: it has no lag yet, and the drain waits for it. If the source does not answer, the
    previous check's partitions are kept, with why."""
    topics, policy = TopicFilter(config), config.policy()
    try:
        groups = kafka.groups(failover.source)
        committed = {partition for group in failover.groups for partition in groups.committed(group)}
    except Exception as exc:  # librdkafka raises several kinds: the reason is shown, and the drain waits
        kept = [(p.topic, p.partition) for p in previous.partitions]
        return kept, f"{type(exc).__name__}: {exc}"
    replicated = {(t, p) for t, p in committed if topics.should_replicate(t) and not is_heartbeats_topic(policy, t)}
    return sorted(replicated), ""


def _source_ends(failover: Failover, partitions: list[Partition]) -> tuple[dict[Partition, int], str]:
    """The source end offsets of the partitions ({} if unknown, with why)."""
    if not partitions:
        return {}, ""
    try:
        return kafka.end_offsets(failover.source, partitions), ""
    except Exception as exc:  # the trend does without them; the drain itself only needs the lag
        return {}, f"{type(exc).__name__}: {exc}"


def _measured(flow: Flow, partitions: list[Partition], ends: dict[Partition, int]) -> tuple[DrainPartition, ...]:
    """Each partition's replication lag as its task last reported it (None: not reported yet) and its end offset."""
    lags = reported_lags(flow.pk, {t for t, _ in partitions})
    return tuple(DrainPartition(t, p, lags.get((t, p)), ends.get((t, p))) for t, p in partitions)


def reported_lags(flow_id: int, topics: set[str]) -> dict[Partition, int | None]:
    """The lag each partition of these topics last reported in the flow (what the tasks report; nothing dials)."""
    reports = PartitionReport.objects.filter(flow_id=flow_id, topic__in=topics)
    return {(t, p): lag for t, p, lag in reports.values_list("topic", "partition", "lag")}


def _lag(measured: tuple[DrainPartition, ...], partitions_error: str) -> int | None:
    """The sum of the partitions' lags: None while one has none reported (a partial sum would read too low), or
    when the partitions are unknown. No partition at all (the groups committed nothing the flow replicates): 0,
    nothing to wait for."""
    if not measured:
        return None if partitions_error else 0
    lags = [p.lag for p in measured]
    return None if any(lag is None for lag in lags) else sum(lag for lag in lags if lag is not None)


def _still(trend: tuple[DrainSample, ...]) -> bool:
    """A drain to 0 means "everything written is replicated", which a lag of 0 read while the producers still write
    does not show (it is a moment between two fetches): it also needs the source end offsets unchanged since the
    previous check. Without end offsets (no partitions reported yet, source unreachable) the lag alone decides."""
    if trend[-1].source_end is None:
        return True
    return len(trend) >= 2 and trend[-2].source_end == trend[-1].source_end


def _rate(points: list[tuple[float, int | None]], window: float) -> float | None:
    """Change per second of the (time, value) points of the last ``window`` seconds (at least the last two); None
    with fewer than two known values."""
    known = [(at, value) for at, value in points if value is not None]
    if len(known) < 2:
        return None
    recent = [point for point in known if point[0] >= known[-1][0] - window]
    (first_at, first), (last_at, last) = (recent[0], recent[-1]) if len(recent) >= 2 else (known[-2], known[-1])
    seconds = last_at - first_at
    return round((last - first) / seconds, 1) if seconds > 0 else None


def _eta(lag: int | None, threshold: int, lag_rate: float | None) -> float | None:
    if lag is None or lag_rate is None or lag_rate >= 0:
        return None
    return round((lag - threshold) / -lag_rate, 1)


def _why(
    lag: int | None,
    threshold: int,
    lag_rate: float | None,
    write_rate: float | None,
    measured: tuple[DrainPartition, ...],
    partitions_error: str,
    by_mm2: bool = False,
) -> str | None:
    """Why the drain is not done yet, when it is not just a matter of time."""
    if lag is None and not measured:
        return f"the groups' committed partitions on the source could not be read ({partitions_error})"
    if lag is None:
        unreported = [f"{p.topic}-{p.partition}" for p in measured if p.lag is None]
        shown = ", ".join(unreported[:5]) + (f" and {len(unreported) - 5} more" if len(unreported) > 5 else "")
        if by_mm2:
            return f"MirrorMaker 2 has committed no source position for {shown} yet: does it replicate them?"
        return f"the flow reports no lag yet for {shown}: are its tasks running? (see the flow page)"
    if threshold == 0 and write_rate is None:
        return "waiting for a second check, to see whether the source producers have stopped writing"
    if write_rate is not None and write_rate > 0 and threshold == 0 and lag == 0:
        return (
            f"the lag reads 0, but the source producers are still writing (~{write_rate:,.0f} records/s): a drain "
            "to 0 completes once the source end offsets stop moving; stop them or raise the threshold"
        )
    if write_rate is not None and write_rate > 0 and threshold == 0:
        return (
            f"the source producers are still writing (~{write_rate:,.0f} records/s), so the lag cannot reach 0: "
            "stop them (the fence step needs that anyway) or raise the threshold"
        )
    if write_rate is not None and write_rate > 0 and (lag_rate is None or lag_rate >= 0):
        return (
            f"the lag is not going down: the producers write ~{write_rate:,.0f} records/s, about as fast as the "
            "flow replicates; raise the threshold or stop them"
        )
    return None
