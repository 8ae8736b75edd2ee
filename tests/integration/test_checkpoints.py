"""Checkpoints on real clusters: commits at the live tip are checkpointed exactly and promptly; monotonicity.

The latency target (p99 at most 2x emit.checkpoints.interval.seconds, from a commit until its checkpoint is
readable) is measured by `python -m bench.checkpoint_latency`, which prints figures: on a shared, loaded machine
a timing assertion here would flake. This test asserts what must always hold, and a generous liveness bound.
"""

from __future__ import annotations

import collections
import random
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, Producer, TopicPartition
from confluent_kafka.admin import AdminClient

from replication.config import ClusterConfig, FlowConfig
from replication.emitters.checkpoints import CheckpointEmitter
from replication.emitters.periodic import CheckpointSchedule, run_periodically
from replication.kafka.clients import ClientFactory, ErrorCallback
from replication.kafka.internaltopics import TopicTail
from replication.metrics.registry import MetricsRegistry
from replication.offsets.checkpoints import read_checkpoints
from replication.task.replicationtask import ReplicationTask
from tests.support.kafka import admin, create_topic, end_offsets, unique_topic, wait_until
from tests.support.replication import make_flow, produce_known
from tests.support.translation import place_groups, replicate

pytestmark = pytest.mark.kafka
INTERVAL = 1.0


@contextmanager
def running(flow: FlowConfig) -> Iterator[ReplicationTask]:
    """The flow's task and its checkpoint emitter, each in a thread as the runner has them."""
    stopping = threading.Event()
    task = ReplicationTask(flow, metrics=MetricsRegistry())
    threads = [
        threading.Thread(target=task.run, args=(stopping,), daemon=True),
        threading.Thread(
            target=run_periodically, args=([CheckpointSchedule(CheckpointEmitter(flow))], stopping), daemon=True
        ),
    ]
    for thread in threads:
        thread.start()
    try:
        yield task
    finally:
        stopping.set()
        for thread in threads:
            thread.join(60)


class CountingClients(ClientFactory):
    """Real clients, counted by kind as they are made."""

    def __init__(self) -> None:
        self.made: collections.Counter[str] = collections.Counter()

    def admin(self, cluster: ClusterConfig) -> AdminClient:
        self.made["admin"] += 1
        return super().admin(cluster)

    def producer(self, cluster: ClusterConfig, error_cb: ErrorCallback | None = None) -> Producer:
        self.made["producer"] += 1
        return super().producer(cluster, error_cb)

    def consumer(self, cluster: ClusterConfig, purpose: str) -> Consumer:
        self.made["consumer"] += 1
        return super().consumer(cluster, purpose)


class CheckpointWatcher:
    """Tails the checkpoint topic and remembers when each (group, upstream offset) was first readable."""

    def __init__(self, flow: FlowConfig) -> None:
        consumer = ClientFactory().consumer(flow.target, f"test-{unique_topic('watch')}")
        self.tail = TopicTail(consumer, f"{flow.source.alias}.checkpoints.internal")
        self.seen: list[tuple[float, str, int, int, int]] = []  # time, group, partition, upstream, downstream
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stopping.is_set():
            for cp in read_checkpoints(self.tail):
                self.seen.append(
                    (time.monotonic(), cp.consumer_group_id, cp.partition, cp.upstream_offset, cp.downstream_offset)
                )
            time.sleep(0.02)

    def first_reaching(self, group: str, partition: int, upstream: int) -> tuple[float, int, int] | None:
        """(time, upstream, downstream) of the first checkpoint at or past upstream."""
        found = (s for s in self.seen if s[1] == group and s[2] == partition and s[3] >= upstream)
        return next(((t, u, d) for t, _, _, u, d in found), None)


def test_commits_at_the_live_tip_are_checkpointed_exactly_and_promptly(kafka_clusters: dict[str, str]) -> None:
    src = kafka_clusters["us-west"]
    topic, group = unique_topic("latency"), unique_topic("latency-group")
    create_topic(src, topic, partitions=1)
    produce_known(src, topic, 1, 200)
    flow = make_flow(
        kafka_clusters, "us-west", "backup", topic, groups=(group,), emit_checkpoints_interval_seconds=INTERVAL
    )
    watcher = CheckpointWatcher(flow)
    live = Producer({"bootstrap.servers": src, "linger.ms": 0})
    rng = random.Random(11)
    latencies = []
    with running(flow):
        watcher.thread.start()
        client = admin(src)
        time.sleep(2.0)  # let replication and the first rounds settle
        for _ in range(10):
            for _ in range(5):  # the topic keeps growing: the group commits at its live tip
                live.produce(topic, b"live", partition=0)
            live.flush(10)
            tip = end_offsets(src, topic, [0])[0]
            request = [ConsumerGroupTopicPartitions(group, [TopicPartition(topic, 0, tip)])]
            client.alter_consumer_group_offsets(request)[group].result(timeout=30)
            committed_at = time.monotonic()
            readable, upstream, downstream = wait_until(
                lambda u=tip: watcher.first_reaching(group, 0, u), 30, 0.02, "the checkpoint"
            )
            assert (upstream, downstream) == (tip, tip)  # one for one from offset 0: the same offsets
            latencies.append(readable - committed_at)
            time.sleep(rng.uniform(0.1, 0.9))  # commits fall anywhere in the emitter's interval
    watcher.stopping.set()
    watcher.thread.join(10)
    latencies.sort()
    p50, p99 = latencies[len(latencies) // 2], latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    print(
        f"commit -> checkpoint readable, interval {INTERVAL}s: p50 {p50:.2f}s p99 {p99:.2f}s max {latencies[-1]:.2f}s"
    )
    assert latencies[-1] <= 5 * INTERVAL, latencies  # liveness; the 2x target is bench.checkpoint_latency's


def test_checkpoints_never_go_backwards_unless_the_group_was_reset_backwards(kafka_clusters: dict[str, str]) -> None:
    src = kafka_clusters["us-east"]
    topic = unique_topic("mono")
    create_topic(src, topic, partitions=1)
    produce_known(src, topic, 1, 500)
    flow = make_flow(kafka_clusters, "us-east", "us-west", topic)
    replicate(flow, lambda: sum(end_offsets(kafka_clusters["us-west"], f"us-east.{topic}", [0]).values()) >= 500, "500")
    prefix = unique_topic("mono-grp")
    scoped = flow.replace(groups=(f"{prefix}-.*",))
    place_groups(src, prefix, topic, {0: [300]})
    clients = CountingClients()
    emitter = CheckpointEmitter(scoped, clients)
    try:
        assert emitter.run_once()
        assert not emitter.run_once()  # nothing changed: nothing written
        place_groups(src, prefix, topic, {0: [120]})  # the group was reset backwards: the checkpoint follows
        assert emitter.run_once()
    finally:
        emitter.close()
    # Its clients were made at the first round only: an idle admin client is falsy (len() 0), and `admin or
    # start()` started the emitter again every round, listing the target's whole metadata each time.
    assert clients.made == {"admin": 2, "consumer": 2, "producer": 1}  # consumers: the checkpoints and the syncs
    again = CheckpointEmitter(scoped)  # a restarted emitter remembers the last checkpoints
    try:
        assert not again.run_once()
    finally:
        again.close()
    tail = TopicTail(ClientFactory().consumer(flow.target, unique_topic("t")), "us-east.checkpoints.internal")
    mine = [
        (c.upstream_offset, c.downstream_offset)
        for c in read_checkpoints(tail)
        if c.consumer_group_id.startswith(prefix)
    ]
    tail.close()
    assert mine == [(300, 300), (120, 120)]
