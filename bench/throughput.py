"""A throughput run: launch a replicator on a preloaded topic and time it until the target holds all N records.

Rates run from launch until the target's end offsets sum to N (exactly once: until committed positions cover N,
since transaction markers take offsets). "steady" rates start when the first record reaches the target, which
leaves out process start-up (a JVM, or a Python interpreter). CPU is the child's own, from wait4's rusage at exit
(start-up and shutdown included); steady CPU is sampled from /proc between first record and completion, and
peak memory (VmHWM, summed over the replicator's processes) when the copy completes.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench import profiling
from bench.kafkaops import BenchError, count_records, delete_topics
from bench.preload import KEEP_FOREVER, Dataset
from bench.procs import Child, machine_busy, tree_cpu_seconds, tree_peak_rss_mb
from bench.replicators import Launch, Replicator, RunContext

POLL_INTERVAL = 0.1


@dataclass
class ThroughputResult:
    """The figures of one throughput run; *_per_m figures are CPU seconds per million records (= µs per record)."""

    replicator: str
    dataset: str
    size: int
    records: int
    round: int
    seconds: float
    steady_seconds: float
    records_per_s: float
    steady_records_per_s: float
    mb_per_s: float
    cpu_s: float
    cpu_s_per_m: float
    steady_cpu_s_per_m: float
    peak_rss_mb: float
    broker_cpu_s: float | None
    machine_busy_pct: float
    verified: int | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class _Timeline:
    first: float | None = None
    first_count: int = 0
    first_cpu: float = 0.0
    done: float | None = None
    done_cpu: float = 0.0
    peak_rss_mb: float = 0.0


def run_throughput(
    replicator: Replicator,
    ctx: RunContext,
    dataset: Dataset,
    round_no: int,
    verify: bool = False,
    profile: Path | None = None,
) -> ThroughputResult:
    """One timed copy of dataset; with profile, py-spy samples the replicator throughout (and slows it a little)."""
    brokers_before = _brokers_cpu(ctx)
    busy_before = machine_busy()
    launch = replicator.launch(ctx, dataset.topic, dataset.partitions, KEEP_FOREVER)
    profiler = profiling.attach(launch.child.pid, profile) if profile else None
    try:
        timeline = _wait_until_copied(launch, dataset.count, timeout=max(180.0, dataset.count / 5000))
        brokers_after = _brokers_cpu(ctx)
        busy_after = machine_busy()
    finally:
        usage = launch.child.stop()
        launch.close()
        if profiler is not None:
            profiler.join(timeout=30)  # py-spy writes its output when the replicator exits
    if usage.exit_code not in replicator.clean_exits:
        raise BenchError(f"{replicator.name} exited with {usage.exit_code}:\n{launch.child.log_tail()}")
    verified = None
    if verify:
        verified = count_records(ctx.clusters.target, launch.target_topic, dataset.partitions, launch.isolation)
    delete_topics(ctx.clusters.target, launch.target_topics, wait=False)
    broker_cpu = None if brokers_before is None or brokers_after is None else brokers_after - brokers_before
    busy = 100 * (busy_after[0] - busy_before[0]) / max(busy_after[1] - busy_before[1], 1e-9)
    return _result(
        replicator.name, dataset, round_no, launch.child, timeline, usage.cpu_seconds, broker_cpu, busy, verified
    )


def _wait_until_copied(launch: Launch, count: int, timeout: float) -> _Timeline:
    timeline = _Timeline()
    deadline = time.monotonic() + timeout
    while True:
        if not launch.child.running():
            raise BenchError(f"{launch.child.log_path.name}: the replicator exited early:\n{launch.child.log_tail()}")
        if timeline.first is None and (first := launch.target.end_sum()) > 0:
            timeline.first, timeline.first_count = time.monotonic(), first
            timeline.first_cpu = tree_cpu_seconds(launch.child.pid)
        if timeline.first is not None and launch.replicated() >= count:
            timeline.done, timeline.done_cpu = time.monotonic(), tree_cpu_seconds(launch.child.pid)
            timeline.peak_rss_mb = tree_peak_rss_mb(launch.child.pid)
            return timeline
        if time.monotonic() > deadline:
            raise BenchError(f"{launch.target_topic}: {launch.replicated()} of {count} records after {timeout:.0f}s")
        time.sleep(POLL_INTERVAL)


def _brokers_cpu(ctx: RunContext) -> float | None:
    pids = ctx.clusters.broker_pids
    return sum(tree_cpu_seconds(pid) for pid in pids) if pids else None


def _result(
    name: str,
    dataset: Dataset,
    round_no: int,
    child: Child,
    timeline: _Timeline,
    cpu: float,
    broker_cpu: float | None,
    busy: float,
    verified: int | None,
) -> ThroughputResult:
    assert timeline.first is not None and timeline.done is not None
    seconds = timeline.done - child.started
    steady = max(timeline.done - timeline.first, 1e-3)
    steady_records = dataset.count - timeline.first_count
    per_m = 1e6 / dataset.count
    return ThroughputResult(
        replicator=name,
        dataset=dataset.label,
        size=dataset.size,
        records=dataset.count,
        round=round_no,
        seconds=round(seconds, 3),
        steady_seconds=round(steady, 3),
        records_per_s=round(dataset.count / seconds),
        steady_records_per_s=round(steady_records / steady),
        mb_per_s=round(dataset.payload_bytes / seconds / 1e6, 2),
        cpu_s=round(cpu, 2),
        cpu_s_per_m=round(cpu * per_m, 2),
        steady_cpu_s_per_m=round((timeline.done_cpu - timeline.first_cpu) * 1e6 / max(steady_records, 1), 2),
        peak_rss_mb=round(timeline.peak_rss_mb),
        broker_cpu_s=None if broker_cpu is None else round(broker_cpu, 2),
        machine_busy_pct=round(busy, 1),
        verified=verified,
    )
