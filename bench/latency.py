"""A latency run: end-to-end replication latency of a running replicator at a fixed, moderate load.

Method. A fresh source topic; the replicator is started and proven live (a ping record reaches the target).
Then bench.loadgen produces `rate` records/s for `seconds` in its own process, each stamped with CreateTime when
produced. Replicators keep the source timestamp on the remote record, so a probe consumer on the target
(read_committed, poll() per record) takes latency = wall clock when the record is handed to it - its timestamp.
Source produce, both replicator hops, the target append and the probe's fetch are all inside the figure; only
the replicator differs between runs. Records stamped in the first `warmup` seconds are not counted. Everything
shares one clock, on one machine. CPU is sampled from /proc over the load phase alone.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict, dataclass
from typing import Any

from confluent_kafka import KafkaError, Producer, TopicPartition

from bench.kafkaops import BenchError, create_topic, delete_topics, probe_consumer, topic_partitions, wait_for
from bench.procs import Child, tree_cpu_seconds
from bench.replicators import REPO, Replicator, RunContext, python_env

PING = b"ping"


@dataclass
class LatencyResult:
    """Latency percentiles in ms over the measured records, and the replicator's CPU under that load."""

    replicator: str
    round: int
    rate: int
    seconds: float
    produced: int
    received: int
    measured: int
    p50_ms: float
    p90_ms: float
    p99_ms: float
    p999_ms: float
    max_ms: float
    cpu_pct: float
    cpu_s_per_m: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class LatencyProbe:
    """Reads the target topic from the beginning and keeps each load record's latency."""

    def __init__(self, bootstrap: str, topic: str, partitions: int, isolation: str) -> None:
        wait_for(lambda: topic_partitions(bootstrap, topic) == partitions, 90, f"target topic {topic}")
        self.consumer = probe_consumer(bootstrap, **{"isolation.level": isolation})
        self.consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        self.pings = self.received = 0
        self.cutoff_ms = float("inf")
        self.latencies: list[float] = []

    def drain(self, seconds: float) -> None:
        """poll() per record for `seconds`: a batch call would add its own wait to the latency of a record."""
        end = time.monotonic() + seconds
        poll, clock = self.consumer.poll, time.time
        while time.monotonic() < end:
            msg = poll(0.05)
            if msg is None:
                continue
            now_ms = clock() * 1000
            error = msg.error()
            if error is not None:
                if error.code() != KafkaError._PARTITION_EOF:
                    raise BenchError(f"probe: {error.str()}")
                continue
            if msg.key() == PING:
                self.pings += 1
                continue
            self.received += 1
            stamp = msg.timestamp()[1]
            if stamp >= self.cutoff_ms:
                self.latencies.append(now_ms - stamp)

    def close(self) -> None:
        self.consumer.close()


def run_latency(
    replicator: Replicator,
    ctx: RunContext,
    round_no: int,
    rate: int,
    seconds: float,
    warmup: float,
    size: int = 100,
    partitions: int = 8,
) -> LatencyResult:
    topic = f"lat-{ctx.run_id}"
    create_topic(ctx.clusters.source, topic, partitions)
    launch = replicator.launch(ctx, topic, partitions, {})
    probe: LatencyProbe | None = None
    try:
        probe = LatencyProbe(ctx.clusters.target, launch.target_topic, partitions, "read_committed")
        _ping_until_live(ctx.clusters.source, topic, probe)
        produced, cpu = _measure_load(ctx, topic, probe, launch.child, rate, seconds, warmup, size, partitions)
    finally:
        usage = launch.child.stop()
        launch.close()
        if probe is not None:
            probe.close()
    if usage.exit_code not in replicator.clean_exits:
        raise BenchError(f"{replicator.name} exited with {usage.exit_code}:\n{launch.child.log_tail()}")
    delete_topics(ctx.clusters.target, launch.target_topics, wait=False)
    delete_topics(ctx.clusters.source, [topic], wait=False)
    return _result(replicator.name, round_no, rate, seconds, produced, probe, cpu, seconds + warmup)


def _ping_until_live(bootstrap: str, topic: str, probe: LatencyProbe, timeout: float = 300.0) -> None:
    # MirrorMaker 2 took 50-120 s from its launch to its first copied record on a 2-core machine at load 25.
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    deadline = time.monotonic() + timeout
    while probe.pings == 0:
        if time.monotonic() > deadline:
            raise BenchError(f"{topic}: no ping reached the target within {timeout:.0f}s")
        producer.produce(topic, b"", PING, 0)
        producer.flush(10)
        probe.drain(0.25)


def _measure_load(
    ctx: RunContext,
    topic: str,
    probe: LatencyProbe,
    replicator: Child,
    rate: int,
    seconds: float,
    warmup: float,
    size: int,
    partitions: int,
) -> tuple[int, float]:
    argv = [
        sys.executable,
        "-m",
        "bench.loadgen",
        "--bootstrap",
        ctx.clusters.source,
        "--topic",
        topic,
        "--rate",
        str(rate),
        "--seconds",
        str(seconds + warmup),
        "--size",
        str(size),
        "--partitions",
        str(partitions),
    ]
    cpu_before = tree_cpu_seconds(replicator.pid)
    load = Child(argv, ctx.workdir / f"{ctx.run_id}-loadgen.log", cwd=REPO, env=python_env())
    probe.cutoff_ms = (time.time() + warmup) * 1000
    try:
        while load.running():
            probe.drain(0.5)
    except BaseException:
        load.stop()
        raise
    usage = load.join(timeout=30)
    cpu = tree_cpu_seconds(replicator.pid) - cpu_before
    if usage.exit_code != 0:
        raise BenchError(f"loadgen failed:\n{load.log_tail()}")
    produced = int(json.loads(load.log_tail(1))["produced"])
    deadline = time.monotonic() + 30
    while probe.received < produced and time.monotonic() < deadline:
        probe.drain(0.5)
    return produced, cpu


def _percentile(ordered: list[float], q: float) -> float:
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1) if ordered else float("nan")


def _result(
    name: str,
    round_no: int,
    rate: int,
    seconds: float,
    produced: int,
    probe: LatencyProbe | None,
    cpu: float,
    load_seconds: float,
) -> LatencyResult:
    assert probe is not None
    ordered = sorted(probe.latencies)
    return LatencyResult(
        replicator=name,
        round=round_no,
        rate=rate,
        seconds=seconds,
        produced=produced,
        received=probe.received,
        measured=len(ordered),
        p50_ms=_percentile(ordered, 0.50),
        p90_ms=_percentile(ordered, 0.90),
        p99_ms=_percentile(ordered, 0.99),
        p999_ms=_percentile(ordered, 0.999),
        max_ms=round(ordered[-1], 1) if ordered else float("nan"),
        cpu_pct=round(100 * cpu / load_seconds, 1),
        cpu_s_per_m=round(cpu * 1e6 / max(produced, 1), 2),
    )
