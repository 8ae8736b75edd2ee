"""A task's replication latency figure against what a consumer of the target sees, on real brokers, at a low rate.

The figure ends when the target acknowledged a run, but the task learns of the acknowledgement only when it serves
its delivery reports, between consume calls. With a 25 ms wait for the next record while acknowledgements were
due, a 20 records/s flow of the demo read p50 47 ms for records a consumer of the target had 24 ms after they
were produced at the source.
"""

from __future__ import annotations

import statistics
import threading
import time
import uuid

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from replication.metrics.registry import MetricsRegistry
from tests.support.kafka import create_topic, unique_topic, wait_until
from tests.support.replication import make_flow, new_task

pytestmark = pytest.mark.kafka

RECORDS = 100
INTERVAL_S = 0.05  # 20 records/s: each run waits for its acknowledgement alone


def test_the_latency_figure_matches_what_a_consumer_of_the_target_sees(kafka_clusters: dict[str, str]) -> None:
    topic = unique_topic("latency")
    create_topic(kafka_clusters["us-west"], topic, 1)
    metrics = MetricsRegistry()
    task = new_task(make_flow(kafka_clusters, "us-west", "us-east", topic), metrics=metrics)
    remote = f"us-west.{topic}"
    stopping = threading.Event()

    def loop() -> None:
        while not stopping.is_set():
            task.run_once()

    runner = threading.Thread(target=loop, daemon=True)
    runner.start()
    probe = Consumer(
        {
            "bootstrap.servers": kafka_clusters["us-east"],
            "group.id": f"probe-{uuid.uuid4().hex[:6]}",
            "enable.auto.commit": False,
            "fetch.wait.max.ms": 100,
        }
    )
    seen: list[float] = []
    try:
        wait_until(lambda: remote in probe.list_topics(timeout=10).topics, 30, what="the remote topic")
        probe.assign([TopicPartition(remote, 0, 0)])
        producer = Producer({"bootstrap.servers": kafka_clusters["us-west"], "linger.ms": 0})
        for n in range(RECORDS):
            producer.produce(topic, str(n).encode(), partition=0)
            producer.poll(0)
            due = time.monotonic() + INTERVAL_S
            while time.monotonic() < due:  # pacing the source at 20 records/s while the probe reads
                msg = probe.poll(0.005)
                if msg is not None and msg.error() is None:
                    seen.append(time.time() * 1000 - msg.timestamp()[1])
        producer.flush(10)
        deadline = time.monotonic() + 30
        while len(seen) < RECORDS and time.monotonic() < deadline:
            msg = probe.poll(0.1)
            if msg is not None and msg.error() is None:
                seen.append(time.time() * 1000 - msg.timestamp()[1])
    finally:
        stopping.set()
        runner.join(30)
        probe.close()
        task.close()
    assert len(seen) == RECORDS
    partition = metrics.snapshot()["flows"][task.flow.name]["partitions"][f"{topic}-0"]
    assert partition["record-count"] == RECORDS
    figure, seen_p50 = partition["replication-latency-ms"]["p50"], statistics.median(seen)
    assert figure is not None
    # The figure ends when the task serves the acknowledgement: on a quiet machine 1-2 ms after the probe sees the
    # record, in one CI run 9 ms after (two test workers and their brokers on 2 cores). With the 25 ms wait it
    # read 19.6 ms after on a quiet machine.
    assert figure <= seen_p50 + 14, (figure, seen_p50)
