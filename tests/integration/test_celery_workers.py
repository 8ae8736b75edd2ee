"""Real Celery workers on Redis with beat and Postgres: flows replicate, and a SIGKILLed worker's tasks move."""

from __future__ import annotations

import signal
from collections import Counter
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from bench.procs import process_tree
from controlplane.orchestration.models import TaskAssignment
from tests.controlplane.orchestration.factories import flow
from tests.support.celery import LEASE_SECONDS, Processes, celery_env, celery_processes, start_celery
from tests.support.kafka import consume_to_end, create_topic, end_offsets, unique_topic, wait_until
from tests.support.replication import produce_known, record_value

pytestmark = [pytest.mark.kafka, pytest.mark.django_db(transaction=True)]
__all__ = ["celery_env", "celery_processes"]  # fixtures


def _total(bootstrap: str, topic: str, partitions: int) -> int:
    try:
        return sum(end_offsets(bootstrap, topic, range(partitions)).values())
    except Exception:
        return 0


# Celery's threads pool runs a worker's tasks as threads of one process: memory stays nearly flat as idle flows
# are added (bench/worker_memory.py). Everything here must hold on it as on prefork.
POOLS = pytest.mark.parametrize("pool", ["prefork", "threads"])


@POOLS
def test_a_sigkilled_worker_hands_its_tasks_to_the_other_with_no_loss(
    kafka_clusters: dict[str, str],
    celery_env: dict[str, str],
    celery_processes: Processes,
    tmp_path: Path,
    pool: str,
) -> None:
    first, second = unique_topic("wk1"), unique_topic("wk2")
    create_topic(kafka_clusters["us-west"], first, partitions=2)
    create_topic(kafka_clusters["us-east"], second, partitions=2)
    flows = [flow(kafka_clusters, "us-west", "backup", first), flow(kafka_clusters, "us-east", "backup", second)]
    start_celery(celery_env, celery_processes, tmp_path, "w1", "w2", "beat", pool=pool)
    dst = kafka_clusters["backup"]
    remote = {first: f"us-west.{first}", second: f"us-east.{second}"}
    produce_known(kafka_clusters["us-west"], first, 2, 2000)
    produce_known(kafka_clusters["us-east"], second, 2, 2000)
    wait_until(lambda: all(_total(dst, r, 2) >= 2000 for r in remote.values()), timeout=90, what="both flows")

    victim_task = TaskAssignment.objects.select_related("worker").get(flow=flows[0])
    assert victim_task.worker is not None
    victim = victim_task.worker.name.split("@")[0]
    survivor = "w2" if victim == "w1" else "w1"
    celery_processes[victim].send_signal(signal.SIGKILL)
    celery_processes[victim].wait()

    produce_known(kafka_clusters["us-west"], first, 2, 2000, start=2000)
    produce_known(kafka_clusters["us-east"], second, 2, 2000, start=2000)

    def moved() -> bool:
        tasks = TaskAssignment.objects.select_related("worker").filter(flow__in=flows)
        return all(t.worker is not None and t.worker.name.startswith(f"{survivor}@") for t in tasks)

    wait_until(moved, timeout=LEASE_SECONDS * 6, interval=0.5, what=f"{survivor} holding every task")
    wait_until(lambda: all(_total(dst, r, 2) >= 4000 for r in remote.values()), timeout=90, what="4000 per flow")
    for topic, remote_topic in remote.items():
        values = {m.value() for m in consume_to_end(dst, remote_topic, 2)}
        expected = {record_value(p, seq) for p in range(2) for seq in range(2000)}
        assert values == expected, f"{topic}: {len(expected - values)} records lost"


@pytest.fixture
def admin_api() -> APIClient:
    client = APIClient()
    client.force_authenticate(User.objects.create_superuser("api-admin", password="x"))
    return client


@POOLS
def test_flows_created_through_the_rest_api_replicate_and_pause_resume_loses_nothing(
    kafka_clusters: dict[str, str],
    celery_env: dict[str, str],
    celery_processes: Processes,
    tmp_path: Path,
    admin_api: APIClient,
    pool: str,
) -> None:
    first, second = unique_topic("api1"), unique_topic("api2")
    create_topic(kafka_clusters["us-west"], first, partitions=2)
    create_topic(kafka_clusters["us-east"], second, partitions=2)
    for alias in ("us-west", "us-east", "backup"):
        created = admin_api.post("/api/v1/clusters/", {"alias": alias, "bootstrap_servers": kafka_clusters[alias]})
        assert created.status_code == 201, created.content
    flow_ids = []
    for source, topic in (("us-west", first), ("us-east", second)):
        body = {
            "source": source,
            "target": "backup",
            "topics": [topic],
            "refresh_topics_interval_seconds": 1,
            "offset_flush_interval_ms": 200,
            "emit_checkpoints_enabled": False,
        }
        created = admin_api.post("/api/v1/flows/", body, format="json")
        assert created.status_code == 201, created.content
        flow_ids.append(created.json()["id"])
    start_celery(celery_env, celery_processes, tmp_path, "w1", "beat", pool=pool)
    dst, remote = kafka_clusters["backup"], f"us-west.{first}"
    produce_known(kafka_clusters["us-west"], first, 2, 1000)
    produce_known(kafka_clusters["us-east"], second, 2, 1000)
    wait_until(lambda: _total(dst, remote, 2) >= 1000 and _total(dst, f"us-east.{second}", 2) >= 1000, timeout=90)
    worker_tree = process_tree(celery_processes["w1"].pid)
    assert len(worker_tree) == (1 if pool == "threads" else 4), f"{len(worker_tree)} processes on the {pool} pool"

    assert admin_api.post(f"/api/v1/flows/{flow_ids[0]}/pause/").status_code == 200
    # The running task sees the pause at its next lease renewal; on the 2-core CI machine under both test workers'
    # load that once took over 30 s on the prefork pool.
    wait_until(lambda: TaskAssignment.objects.get(flow_id=flow_ids[0]).state == "PAUSED", timeout=90, what="paused")
    produce_known(kafka_clusters["us-west"], first, 2, 1000, start=1000)
    status = admin_api.get(f"/api/v1/flows/{flow_ids[0]}/status/").json()
    assert status["paused"] is True and status["tasks"][0]["state"] == "PAUSED"
    assert _total(dst, remote, 2) == 1000, "a paused flow replicates nothing"

    assert admin_api.post(f"/api/v1/flows/{flow_ids[0]}/resume/").status_code == 200
    wait_until(lambda: _total(dst, remote, 2) >= 2000, timeout=60, what="records produced while paused")
    values = {m.value() for m in consume_to_end(dst, remote, 2)}
    assert values == {record_value(p, seq) for p in range(2) for seq in range(1000)}


def test_tasks_max_edits_move_partitions_between_running_tasks_with_no_record_twice(
    kafka_clusters: dict[str, str],
    celery_env: dict[str, str],
    celery_processes: Processes,
    tmp_path: Path,
    admin_api: APIClient,
) -> None:
    """tasks.max 3 -> 2 -> 1 -> 3 under steady traffic: each edit moves partitions between running tasks. Every
    record arrives exactly once (the demo's tasks.max 3 -> 2 used to write a moved partition's records twice)."""
    import threading

    src, dst = kafka_clusters["us-west"], kafka_clusters["backup"]
    topic = unique_topic("moves")
    create_topic(src, topic, partitions=6)
    for alias in ("us-west", "backup"):
        created = admin_api.post("/api/v1/clusters/", {"alias": alias, "bootstrap_servers": kafka_clusters[alias]})
        assert created.status_code == 201, created.content
    body = {
        "source": "us-west",
        "target": "backup",
        "topics": [topic],
        "tasks_max": 3,
        "offset_flush_interval_ms": 200,
        "emit_checkpoints_enabled": False,
    }
    created = admin_api.post("/api/v1/flows/", body, format="json")
    assert created.status_code == 201, created.content
    flow_id = created.json()["id"]
    start_celery(celery_env, celery_processes, tmp_path, "w1", "beat", concurrency=6, pool="threads")
    remote = f"us-west.{topic}"

    def settled(count: int) -> bool:
        """count tasks, each RUNNING with the partitions it should have, and every partition of the topic placed."""
        rows = list(TaskAssignment.objects.filter(flow_id=flow_id))
        placed = {(t, p) for row in rows for t, p in row.partitions if t == topic}
        in_sync = all(row.state == "RUNNING" and row.reported_partitions == row.partitions for row in rows)
        return len(rows) == count and in_sync and len(placed) == 6

    wait_until(lambda: settled(3), timeout=90, what="3 running tasks")
    stop, produced = threading.Event(), [0]

    def traffic() -> None:  # 60 records per 0.1 s round, 10 per partition, until told to stop
        while not stop.is_set():
            produce_known(src, topic, 6, 60, start=produced[0])
            produced[0] += 60
            stop.wait(0.1)

    producer = threading.Thread(target=traffic, name="traffic")
    producer.start()
    try:
        for tasks_max in (2, 1, 3):
            wait_until(lambda: produced[0] >= 600, timeout=30, what="traffic")
            mark = produced[0]  # copied since the last move: the tasks run, not only start
            wait_until(lambda m=mark: _total(dst, remote, 6) >= m, timeout=60, what="caught up")
            edited = admin_api.patch(f"/api/v1/flows/{flow_id}/", {"tasks_max": tasks_max}, format="json")
            assert edited.status_code == 200, edited.content
            wait_until(lambda n=tasks_max: settled(n), timeout=90, interval=0.5, what=f"{tasks_max} settled tasks")
    finally:
        stop.set()
        producer.join(timeout=30)
    total = produced[0]
    wait_until(lambda: _total(dst, remote, 6) >= total, timeout=90, what=f"{total} records at the target")
    got = [(m.partition(), m.value()) for m in consume_to_end(dst, remote, 6)]
    want = {(p, record_value(p, seq)) for p in range(6) for seq in range(total // 6)}
    twice = sorted((p, v[:13]) for (p, v), n in Counter(got).items() if n > 1)  # partition, value's head
    assert not twice, f"{len(got) - len(set(got))} records twice: {twice[:12]}"
    assert set(got) == want
