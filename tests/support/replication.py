"""Helpers for engine tests: flows on the test clusters, producing known data, driving tasks to a condition."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from confluent_kafka import Producer

from replication.config import ClusterConfig, FlowConfig
from replication.metrics.registry import MetricsRegistry
from replication.task.replicationtask import ReplicationTask

REPO = Path(__file__).resolve().parents[2]


def make_flow(clusters: dict[str, str], source: str, target: str, topics: str, **overrides: Any) -> FlowConfig:
    """A flow for tests: only `topics`, fast refresh, no side emitters unless asked."""
    settings: dict[str, Any] = {
        "topics": (topics,),
        "refresh_topics_interval_seconds": 0.5,
        "sync_topic_configs_interval_seconds": 0.5,
        "offset_flush_interval_ms": 200,
        **overrides,
    }
    return FlowConfig(
        ClusterConfig(source, {"bootstrap.servers": clusters[source]}),
        ClusterConfig(target, {"bootstrap.servers": clusters[target]}),
        **settings,
    )


def new_task(flow: FlowConfig, task_id: int = 0, **kwargs: Any) -> ReplicationTask:
    task = ReplicationTask(flow, task_id=task_id, metrics=kwargs.pop("metrics", MetricsRegistry()), **kwargs)
    task.start()
    return task


def drive(tasks: Sequence[ReplicationTask], until: Callable[[], bool], timeout: float = 60.0, what: str = "") -> None:
    """Call run_once on every task until the condition holds; fail at the deadline."""
    deadline = time.monotonic() + timeout
    while not until():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s: {what or until}; tasks: {[t.stats for t in tasks]}")
        for task in tasks:
            task.run_once()


def drive_for(tasks: Sequence[ReplicationTask], iterations: int) -> None:
    for _ in range(iterations):
        for task in tasks:
            task.run_once()


def record_value(partition: int, seq: int, size: int = 100) -> bytes:
    head = f"p{partition}-{seq:09d}-".encode()
    return head + b"x" * max(size - len(head), 0)


def produce_known(
    bootstrap: str,
    topic: str,
    partitions: int,
    count: int,
    size: int = 100,
    start: int = 0,
    transactional_id: str | None = None,
    timestamp_step_ms: int = 1,
) -> None:
    """count records spread round-robin over partitions, each with a key, two headers and a unique value.

    Record i gets CreateTime now + i * timestamp_step_ms: increasing across calls (the timestamp-fallback tests
    rely on it), but up to count ms in the future; latency measurements pass 0 so no record predates its copy."""
    config: dict[str, Any] = {
        "bootstrap.servers": bootstrap,
        "linger.ms": 20,
        "batch.num.messages": 10000,
        "queue.buffering.max.messages": 1000000,
        "enable.idempotence": True,
    }
    if transactional_id:
        config["transactional.id"] = transactional_id
    producer = Producer(config)
    # Current timestamps: replication keeps them, and brokers delete segments older than retention.ms (7 days).
    now_ms = int(time.time() * 1000)
    for i in range(start, start + count):
        p = i % partitions
        seq = i // partitions
        headers = [("seq", str(seq).encode()), ("bin", bytes([i % 256, 0, 255]))]
        while True:
            try:
                producer.produce(
                    topic,
                    record_value(p, seq, size),
                    f"key-{i}".encode(),
                    p,
                    headers=headers,
                    timestamp=now_ms + i * timestamp_step_ms,
                )
                break
            except BufferError:
                producer.poll(0.1)
    assert producer.flush(60) == 0


def start_replicator(config: Path, log: Path, *options: str) -> subprocess.Popen[bytes]:
    """`python -m replication run --config config [options]` in its own process, its output appended to log."""
    with open(log, "ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "replication", "run", "--config", str(config), *options],
            cwd=REPO,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
