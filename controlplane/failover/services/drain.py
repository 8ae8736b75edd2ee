"""Step 3, the drain: wait until the flow's lag is at most the threshold, and say how it is going.

Each run (the wizard polls it) adds a sample of the flow's lag and of the source end offsets to a short trend kept
with the result. From it: the lag's rate of change, an ETA, and whether the source producers are still writing,
which is why a drain to 0 does not complete under live traffic: a lag of 0 read between two fetches says nothing
while the producers still write, so a drain to 0 also waits for the source end offsets to stop moving.
"""

from __future__ import annotations

import time
from typing import Any

from controlplane.failover.models import Failover
from controlplane.failover.results import DrainResult, DrainSample
from controlplane.failover.services import context, kafka
from controlplane.flows.services import flow_config
from controlplane.monitoring.services.health import totals
from controlplane.orchestration.services.status import flow_status, reported_partitions
from controlplane.orchestration.taskstatus import FlowStatus
from replication.mm2.policy import ReplicationPolicy, is_heartbeats_topic, is_internal_topic

TREND_SAMPLES = 30
RATE_WINDOW_SECONDS = 60.0


def drain_step(failover: Failover, inputs: dict[str, Any]) -> tuple[DrainResult, bool]:
    """Complete once the flow's lag is at most the threshold; the UI polls it for the progress bar and trend."""
    flow = context.flows(failover).forward
    if flow is None:
        return DrainResult(error="the flow from the source to the target no longer exists", waiting=True), False
    status = flow_status(flow)
    lag, threshold = totals(status).lag, failover.drain_threshold
    previous = failover.result(DrainResult)
    initial = previous.initial_lag if previous.initial_lag is not None else lag
    end, source_error = _source_end(failover, status, flow_config(flow).policy())
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
        lag_rate=lag_rate,
        source_write_rate=write_rate,
        producers_writing=write_rate is not None and write_rate > 0,
        eta_seconds=0 if done else _eta(lag, threshold, lag_rate),
        source_error=source_error,
        why=None if done else _why(lag, threshold, lag_rate, write_rate),
    )
    return result, done


def _still(trend: tuple[DrainSample, ...]) -> bool:
    """A drain to 0 means "everything written is replicated", which a lag of 0 read while the producers still write
    does not show (it is a moment between two fetches): it also needs the source end offsets unchanged since the
    previous check. Without end offsets (no partitions reported yet, source unreachable) the lag alone decides."""
    if trend[-1].source_end is None:
        return True
    return len(trend) >= 2 and trend[-2].source_end == trend[-1].source_end


def _source_end(failover: Failover, status: FlowStatus, policy: ReplicationPolicy) -> tuple[int | None, str]:
    """The sum of the source end offsets of the data partitions the flow replicates (None if unknown, with why).
    Heartbeat and internal topics are left out: replication itself writes them every second or so."""
    reported = reported_partitions(status.flow)
    partitions = sorted((t, p) for t, p in reported if not is_heartbeats_topic(policy, t) and not is_internal_topic(t))
    if not partitions:
        return None, ""
    try:
        return sum(kafka.end_offsets(failover.source, partitions).values()), ""
    except Exception as exc:  # the trend does without it; the drain itself only needs the lag
        return None, f"{type(exc).__name__}: {exc}"


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


def _why(lag: int | None, threshold: int, lag_rate: float | None, write_rate: float | None) -> str | None:
    """Why the drain is not done yet, when it is not just a matter of time."""
    if lag is None:
        return "the flow reports no lag yet: are its tasks running? (see the flow page)"
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
