"""The dashboard's rates on real brokers with real Celery workers, beat's sampler and observer: a stream through two
flows enters replication once and is copied twice, and a partition moving to another task does not double its flow's
rate. The known rate is the source's own end-offset growth over the readings, not the producer's nominal one."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from django.utils import timezone

from controlplane.flows.models import Flow
from controlplane.monitoring.services import graph
from controlplane.orchestration.models import TaskAssignment
from tests.controlplane.orchestration.factories import flow
from tests.support.celery import Processes, celery_env, celery_processes, start_celery
from tests.support.kafka import create_topic, end_offsets, unique_topic, wait_until

pytestmark = [pytest.mark.kafka, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
__all__ = ["celery_env", "celery_processes"]  # fixtures

RATE = 40  # records/s produced, over two partitions
TOLERANCE = 0.25  # a reading's distance from the source's measured rate: reports come every lease/3 seconds


@pytest.fixture
def stream(kafka_clusters: dict[str, str]) -> Iterator[str]:
    """A topic on us-west that gets RATE records/s, round-robin over its two partitions, until the test ends."""
    topic = unique_topic("rates")
    create_topic(kafka_clusters["us-west"], topic, partitions=2)
    stop = threading.Event()

    def produce() -> None:
        producer = Producer({"bootstrap.servers": kafka_clusters["us-west"], "linger.ms": 5})
        sent, started = 0, time.monotonic()
        while not stop.is_set():
            due = int((time.monotonic() - started) * RATE)
            for _ in range(due - sent):
                producer.produce(topic, value=b"x" * 100, partition=sent % 2)
                sent += 1
            producer.poll(0)
            time.sleep(0.05)
        producer.flush(10)

    thread = threading.Thread(target=produce, daemon=True)
    thread.start()
    yield topic
    stop.set()
    thread.join(15)


def source_total(bootstrap: str, topic: str) -> int:
    return sum(end_offsets(bootstrap, topic, range(2)).values())


def readings(bootstrap: str, topic: str, seconds: float) -> tuple[list[dict[str, Any]], float]:
    """The dashboard every 5 s for ``seconds``, and the source's rate over the same time."""
    first, started = source_total(bootstrap, topic), time.monotonic()
    bodies = []
    while time.monotonic() - started < seconds:
        time.sleep(5)
        bodies.append(graph.dashboard(timezone.now()))
    return bodies, (source_total(bootstrap, topic) - first) / (time.monotonic() - started)


def test_two_hops_enter_once_and_copy_twice_and_a_partition_move_does_not_double_the_rate(
    kafka_clusters: dict[str, str],
    celery_env: dict[str, str],
    celery_processes: Processes,
    tmp_path: Path,
    stream: str,
) -> None:
    west = kafka_clusters["us-west"]
    first = flow(kafka_clusters, "us-west", "us-east", stream, tasks_max=2)
    flow(kafka_clusters, "us-east", "backup", f"us-west.{stream}")
    start_celery(celery_env, celery_processes, tmp_path, "w1", "beat", concurrency=4)  # 3 slots: 3 tasks
    remote = f"us-east.us-west.{stream}"
    wait_until(lambda: source_total(kafka_clusters["backup"], remote) > 0, timeout=120, what="records at backup")
    time.sleep(65)  # a minute of samples of both flows copying

    bodies, rate = readings(west, stream, 20)
    assert abs(rate - RATE) <= TOLERANCE * RATE, rate  # the producer kept its rate
    for body in bodies:
        tiles = body["tiles"]
        entering, copied = tiles["entering_per_second"], tiles["copied_per_second"]
        assert abs(entering - rate) <= TOLERANCE * rate, (entering, copied, rate)
        assert abs(copied - 2 * rate) <= TOLERANCE * 2 * rate, (entering, copied, rate)

    # tasks.max 2 -> 1: the controller moves task 1's partition to task 0 and drops task 1. Its record counter left
    # the flow's sum of per-task counters, which the old window read as a restart: 66-67/s for a minute at 40/s.
    Flow.objects.filter(pk=first.pk).update(tasks_max=1)
    wait_until(
        lambda: len(TaskAssignment.objects.get(flow=first, task_id=0).reported_partitions) == 2,
        timeout=60,
        what="task 0 replicating both partitions",
    )
    bodies, rate = readings(west, stream, 60)
    edge = [next(e for e in b["edges"] if e["id"] == first.pk)["records_per_second"] for b in bodies]
    assert max(edge) <= (1 + TOLERANCE) * rate, (edge, rate)
