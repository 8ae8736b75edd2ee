"""Checkpoint latency: from a source group commit until its checkpoint is readable in the target. Target: p99 at
most 2x emit.checkpoints.interval.seconds.

Method. One flow runs as the standalone runner runs it: the replication task in one thread, the checkpoint
schedule (full rounds every interval, retries while offsets wait for their syncs) in another. A producer keeps
the source topic growing; every 0.1..0.9 s (so commits fall anywhere in the interval) a consumer group commits
the topic's current end offset, i.e. the live tip, and a third thread tails `<source>.checkpoints.internal` and
notes when a checkpoint at or past that offset for the group is first readable. Latency includes replicating
the records, the offset sync (offset.flush.interval.ms, 200 ms here), the checkpoint round and its write.

    python -m bench.checkpoint_latency [--clusters us-west=127.0.0.1:19092,backup=127.0.0.1:19094] [--commits 60]
        [--interval 1.0]

--clusters names the source, then the target, with the aliases every other flow uses for those clusters:
heartbeat topics always replicate, and cycle detection only recognises a cluster under its one alias (the same
cluster under two aliases bounces heartbeat topics back and forth, their names growing each hop).
"""

from __future__ import annotations

import argparse
import os
import random
import threading
import time
import uuid
from collections.abc import Sequence

from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from replication.config import ClusterConfig, FlowConfig
from replication.emitters.checkpoints import CheckpointEmitter
from replication.emitters.periodic import CheckpointSchedule, run_periodically
from replication.kafka.clients import ClientFactory
from replication.kafka.internaltopics import TopicTail
from replication.metrics.registry import MetricsRegistry
from replication.offsets.checkpoints import read_checkpoints
from replication.task.replicationtask import ReplicationTask

DEFAULT_CLUSTERS = "us-west=127.0.0.1:19092,backup=127.0.0.1:19094"


def _flow(source: ClusterConfig, target: ClusterConfig, topic: str, group: str, interval: float) -> FlowConfig:
    return FlowConfig(
        source,
        target,
        topics=(topic,),
        groups=(group,),
        emit_checkpoints_interval_seconds=interval,
        offset_flush_interval_ms=200,
        refresh_topics_interval_seconds=0.5,
    )


class Watcher(threading.Thread):
    """Notes when each checkpoint of the group first becomes readable."""

    def __init__(self, flow: FlowConfig, group: str) -> None:
        super().__init__(daemon=True)
        consumer = ClientFactory().consumer(flow.target, f"bench-{uuid.uuid4().hex[:8]}")
        self.tail = TopicTail(consumer, f"{flow.source.alias}.checkpoints.internal")
        self.group = group
        self.seen: list[tuple[float, int]] = []
        self.stopping = threading.Event()

    def run(self) -> None:
        while not self.stopping.is_set():
            self.seen += [
                (time.monotonic(), c.upstream_offset)
                for c in read_checkpoints(self.tail)
                if c.consumer_group_id == self.group
            ]
            time.sleep(0.01)

    def reached(self, upstream: int) -> float | None:
        return next((t for t, u in self.seen if u >= upstream), None)


def measure(source: ClusterConfig, target: ClusterConfig, commits: int, interval: float) -> list[float]:
    topic, group = f"bench-cp-{uuid.uuid4().hex[:8]}", f"bench-cp-group-{uuid.uuid4().hex[:8]}"
    src = source.bootstrap_servers
    admin = AdminClient({"bootstrap.servers": src})
    admin.create_topics([NewTopic(topic, 1, 1)])[topic].result(timeout=30)
    flow = _flow(source, target, topic, group, interval)
    stopping = threading.Event()
    task = ReplicationTask(flow, metrics=MetricsRegistry())
    schedule = CheckpointSchedule(CheckpointEmitter(flow))
    threads = [
        threading.Thread(target=task.run, args=(stopping,), daemon=True),
        threading.Thread(target=run_periodically, args=([schedule], stopping), daemon=True),
    ]
    watcher = Watcher(flow, group)
    for thread in [*threads, watcher]:
        thread.start()
    producer, probe = (
        Producer({"bootstrap.servers": src, "linger.ms": 0}),
        Consumer({"bootstrap.servers": src, "group.id": group}),
    )
    rng, latencies = random.Random(1), []
    try:
        time.sleep(3 * interval)
        for _ in range(commits):
            for _ in range(5):
                producer.produce(topic, b"live", partition=0)
            producer.flush(10)
            tip = probe.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)[1]
            request = [ConsumerGroupTopicPartitions(group, [TopicPartition(topic, 0, tip)])]
            admin.alter_consumer_group_offsets(request)[group].result(timeout=30)
            committed = time.monotonic()
            deadline = committed + 30
            while (readable := watcher.reached(tip)) is None and time.monotonic() < deadline:
                time.sleep(0.005)
            latencies.append((readable or float("inf")) - committed)
            time.sleep(rng.uniform(0.1, 0.9))
    finally:
        stopping.set()
        watcher.stopping.set()
        for thread in threads:
            thread.join(60)
        probe.close()
    return sorted(latencies)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.checkpoint_latency", description=__doc__)
    parser.add_argument("--clusters", default=os.environ.get("BENCH_CLUSTERS", DEFAULT_CLUSTERS))
    parser.add_argument("--commits", type=int, default=60)
    parser.add_argument("--interval", type=float, default=1.0)
    args = parser.parse_args(argv)
    (source, src), (target, dst) = (item.split("=", 1) for item in args.clusters.split(","))
    clusters = [ClusterConfig(alias, {"bootstrap.servers": b}) for alias, b in ((source, src), (target, dst))]
    latencies = measure(clusters[0], clusters[1], args.commits, args.interval)

    def pct(q: float) -> float:
        return latencies[min(len(latencies) - 1, int(len(latencies) * q))]

    target = 2 * args.interval
    print(f"checkpoint latency over {len(latencies)} commits, emit.checkpoints.interval.seconds={args.interval}:")
    print(f"  p50 {pct(0.5):.3f}s  p95 {pct(0.95):.3f}s  p99 {pct(0.99):.3f}s  max {latencies[-1]:.3f}s")
    print(f"  target p99 <= {target:.1f}s: {'met' if pct(0.99) <= target else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
