"""Scale on real brokers, through the control plane: one flow of 2,000 partitions run by a real worker and beat.
It catches up, 100 partitions added while it runs are picked up, no task restarts, no lease is lost (the lease
is 4 s here, shorter than a 500-partition start), and every record arrives, checked by bytes."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from confluent_kafka.admin import NewPartitions, NewTopic

from controlplane.orchestration.choices import TaskState
from controlplane.orchestration.models import TaskAssignment
from tests.controlplane.orchestration.factories import flow
from tests.support.celery import Processes, start_celery
from tests.support.kafka import admin, consume_to_end, end_offsets, topic_partitions, unique_topic, wait_until
from tests.support.replication import produce_known, record_value

# ~2 min on a 2-core machine: with the fault scenarios in `make test-faults` (and `make test-all`), not in CI.
pytestmark = [pytest.mark.kafka, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
TOPICS, PARTITIONS, PER_PARTITION, TASKS = 20, 100, 5, 4


def _total(bootstrap: str, topics: list[str], partitions: int) -> int:
    try:
        return sum(sum(end_offsets(bootstrap, t, range(partitions)).values()) for t in topics)
    except Exception:
        return 0  # a remote topic not there yet


def test_a_flow_of_2000_partitions_catches_up_and_takes_100_more_without_a_restart(
    kafka_clusters: dict[str, str], celery_env: dict[str, str], celery_processes: Processes, tmp_path: Path
) -> None:
    src, dst = kafka_clusters["us-west"], kafka_clusters["backup"]
    prefix = unique_topic("scale")
    topics = [f"{prefix}-{i:02d}" for i in range(TOPICS)]
    client = admin(src)
    for future in client.create_topics([NewTopic(t, PARTITIONS, 1) for t in topics]).values():
        future.result(timeout=60)
    wait_until(lambda: all(topic_partitions(src, t) == PARTITIONS for t in topics), timeout=60, what="metadata")
    for t in topics:
        produce_known(src, t, PARTITIONS, PARTITIONS * PER_PARTITION)
    obj = flow(kafka_clusters, "us-west", "backup", f"{prefix}-.*", tasks_max=TASKS)
    start_celery(
        celery_env, celery_processes, tmp_path, "w1", "beat", concurrency=TASKS + 1
    )  # a slot per task, one pool process for the controller
    remotes = [f"us-west.{t}" for t in topics]
    started = time.monotonic()
    want = TOPICS * PARTITIONS * PER_PARTITION
    wait_until(lambda: _total(dst, remotes, PARTITIONS) >= want, timeout=240, interval=2, what=f"{want} records")
    caught_up = time.monotonic() - started
    epochs = dict(TaskAssignment.objects.filter(flow=obj).values_list("task_id", "epoch"))
    assert sorted(epochs) == list(range(TASKS)) and set(epochs.values()) == {1}, f"restarted tasks: {epochs}"

    grown = topics[0]
    client.create_partitions([NewPartitions(grown, PARTITIONS * 2)])[grown].result(timeout=60)
    wait_until(lambda: topic_partitions(src, grown) == PARTITIONS * 2, what="the new partitions")
    added = time.monotonic()
    more = PARTITIONS * 2 * PER_PARTITION  # values 120 B long: unlike the first records of any partition
    produce_known(src, grown, PARTITIONS * 2, more, size=120, start=PARTITIONS * PER_PARTITION)
    remote = f"us-west.{grown}"
    wait_until(
        lambda: _total(dst, [remote], PARTITIONS * 2) >= PARTITIONS * PER_PARTITION + more,
        timeout=120,
        interval=1,
        what="records of the added partitions",
    )
    picked_up = time.monotonic() - added

    assignments = list(TaskAssignment.objects.filter(flow=obj))
    assert {a.task_id: a.epoch for a in assignments} == epochs, "a task restarted or lost its lease"
    assert all(a.state == TaskState.RUNNING and not a.last_error for a in assignments), [
        a.last_error for a in assignments
    ]
    placed = sorted(tuple(tp) for a in assignments for tp in a.partitions if tp[0] == grown)
    assert placed == [(grown, p) for p in range(PARTITIONS * 2)]
    log = (tmp_path / "w1.log").read_text()
    ended = [line for line in log.splitlines() if "run_assignment" in line and " succeeded in " in line]
    assert "lease lost" not in log and ended == [], ended or log[-3000:]  # no runner ended: none restarted

    for t in topics:  # every record once, by bytes, in order per partition
        expected: dict[int, list[bytes]] = {}
        for i in range(PARTITIONS * PER_PARTITION):  # produce_known: record i to partition i % n
            expected.setdefault(i % PARTITIONS, []).append(record_value(i % PARTITIONS, i // PARTITIONS))
        partitions = PARTITIONS
        if t == grown:
            partitions = PARTITIONS * 2
            for i in range(PARTITIONS * PER_PARTITION, PARTITIONS * PER_PARTITION + more):
                expected.setdefault(i % partitions, []).append(record_value(i % partitions, i // partitions, 120))
        got: dict[int, list[bytes]] = {}
        for msg in consume_to_end(dst, f"us-west.{t}", partitions):
            got.setdefault(msg.partition() or 0, []).append(msg.value() or b"")
        assert got == expected, f"{t}: the target's records differ from the source's"
    print(f"2,000 partitions caught up in {caught_up:.1f}s; 100 added partitions replicated in {picked_up:.1f}s")
