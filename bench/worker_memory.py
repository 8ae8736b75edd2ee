"""Control-plane worker memory with idle flows: Celery's prefork pool against its threads pool.

    python -m bench.worker_memory [--flows 1,4,8,16] [--pools prefork,threads]

For each pool and flow count: a fresh state directory with the demo's embedded defaults (SQLite, the spool
transport), N flows of one 10-partition topic each from their own source alias (tasks.max 1) on the bench clusters,
one worker (`--pool P`, concurrency N + 4, MIRRORPLANE_WORKER_SLOTS N) and beat. Once every task runs and its
records are at the target, the flows idle for 10 s; then the worker's process tree is measured: its proportional
set size (shared pages counted once) and its CPU over 10 s. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path

from bench.clusters import bench_clusters
from bench.procs import process_tree, tree_cpu_seconds, tree_pss_mb

REPO = Path(__file__).resolve().parent.parent
PARTITIONS, RECORDS_PER_PARTITION = 10, 10


@dataclass
class WorkerFigures:
    pool: str
    flows: int
    processes: int
    pss_mb: float
    pss_mb_per_flow: float
    idle_cpu_pct: float


def demo_env(state: Path, slots: int, **extra: str) -> dict[str, str]:
    """The demo's embedded defaults (SQLite, the spool transport) in a state directory of their own."""
    return {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{state / 'db.sqlite3'}",
        "CELERY_BROKER_URL": "filesystem://localhost/",
        "MIRRORPLANE_STATE_DIR": str(state),
        "MIRRORPLANE_WORKER_SLOTS": str(slots),
        "DJANGO_SETTINGS_MODULE": "controlplane.settings",
        "PYTHONUNBUFFERED": "1",
        **extra,
    }


def _env(state: Path, flows: int) -> dict[str, str]:
    return demo_env(state, flows, MIRRORPLANE_CONTROLLER_INTERVAL_SECONDS="1")


def _seed(src: str, dst: str, flows: int) -> list[str]:
    """The flows (in this process's Django, on the fresh database) and their source topics with records."""
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    from controlplane.clusters.models import Cluster
    from controlplane.flows.models import Flow

    run = uuid.uuid4().hex[:6]
    topics = [f"wm-{run}-{i}" for i in range(flows)]
    admin = AdminClient({"bootstrap.servers": src})
    for future in admin.create_topics([NewTopic(t, PARTITIONS, 1) for t in topics]).values():
        future.result(60)
    producer = Producer({"bootstrap.servers": src})
    for topic in topics:
        for p in range(PARTITIONS):
            for i in range(RECORDS_PER_PARTITION):
                producer.produce(topic, value=b"%d" % i, partition=p)
    producer.flush(60)
    target = Cluster.objects.create(alias="dst", bootstrap_servers=dst)
    remotes = []
    for i, topic in enumerate(topics):
        source = Cluster.objects.create(alias=f"w{run}x{i}", bootstrap_servers=src)
        Flow.objects.create(
            source=source,
            target=target,
            topics=[topic],
            tasks_max=1,
            emit_checkpoints_enabled=False,
            sync_group_offsets_enabled=False,
        )
        remotes.append(f"{source.alias}.{topic}")
    return remotes


def _arrived(dst: str, remotes: list[str]) -> bool:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": dst, "group.id": "bench-worker-memory"})
    try:
        total = 0
        for remote in remotes:
            for p in range(PARTITIONS):
                try:
                    total += consumer.get_watermark_offsets(TopicPartition(remote, p), timeout=5)[1]
                except Exception:
                    return False
        return total >= len(remotes) * PARTITIONS * RECORDS_PER_PARTITION
    finally:
        consumer.close()


def _running(flows: int) -> bool:
    from controlplane.orchestration.choices import TaskState
    from controlplane.orchestration.models import TaskAssignment

    return TaskAssignment.objects.filter(state=TaskState.RUNNING).count() >= flows


def measure_one(pool: str, flows: int, src: str, dst: str, state: Path) -> WorkerFigures:
    """Run in a process whose environment is `_env(state, flows)`."""
    env = dict(os.environ)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=REPO, env=env, check=True)
    import django

    django.setup()
    remotes = _seed(src, dst, flows)
    celery = [sys.executable, "-m", "celery", "-A", "controlplane"]
    procs = {}
    for name, args in {
        "worker": ["worker", "-l", "info", "--pool", pool, "--concurrency", str(flows + 4)],
        "beat": ["beat", "-l", "info", "--schedule", str(state / "schedule")],
    }.items():
        with open(state / f"{name}.log", "wb") as log:
            procs[name] = subprocess.Popen(
                [*celery, *args], cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
    try:
        deadline = time.monotonic() + 300
        while not (_running(flows) and _arrived(dst, remotes)):
            if time.monotonic() > deadline:
                raise SystemExit(f"{pool}, {flows} flows: not every task ran and caught up in 300 s (see {state})")
            time.sleep(1)
        time.sleep(10)
        worker = procs["worker"].pid
        before, started = tree_cpu_seconds(worker), time.monotonic()
        time.sleep(10)
        cpu = (tree_cpu_seconds(worker) - before) / (time.monotonic() - started) * 100
        pss, processes = tree_pss_mb(worker), len(process_tree(worker))
    finally:
        for proc in procs.values():
            os.killpg(proc.pid, signal.SIGTERM)
        for proc in procs.values():
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
    return WorkerFigures(pool, flows, processes, round(pss, 1), round(pss / flows, 1), round(cpu, 1))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--flows", default="1,4,8,16", help="idle flow counts, comma-separated")
    parser.add_argument("--pools", default="prefork,threads", help="Celery worker pools, comma-separated")
    parser.add_argument("--keep-clusters", action="store_true")
    parser.add_argument("--one", nargs=5, metavar=("POOL", "FLOWS", "SRC", "DST", "STATE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    out = REPO / "var" / "bench" / f"worker-memory-{time.strftime('%Y%m%d-%H%M%S')}"
    if args.one:  # one measurement per process: Django's settings read the fresh database's URL at set-up
        pool, flows, src, dst, state = args.one
        print(json.dumps(asdict(measure_one(pool, int(flows), src, dst, Path(state)))), flush=True)
        return
    figures: list[WorkerFigures] = []
    with bench_clusters(keep=args.keep_clusters) as clusters:
        for pool in args.pools.split(","):
            for flows in (int(n) for n in args.flows.split(",") if n):
                state = out / f"{pool}-{flows}"
                state.mkdir(parents=True)
                one = [sys.executable, "-m", "bench.worker_memory", "--one", pool, str(flows)]
                done = subprocess.run(
                    [*one, clusters.source, clusters.target, str(state)],
                    cwd=REPO,
                    env=_env(state, flows),
                    capture_output=True,
                    text=True,
                    check=False,
                )
                if done.returncode != 0:
                    print(done.stdout + done.stderr, file=sys.stderr)
                    continue
                figures.append(WorkerFigures(**json.loads(done.stdout.strip().splitlines()[-1])))
                print(json.dumps(asdict(figures[-1])), flush=True)
    print(f"\n{'pool':>8} {'flows':>5} {'processes':>9} {'PSS MB':>7} {'MB per flow':>11} {'idle CPU %':>10}")
    for f in figures:
        print(f"{f.pool:>8} {f.flows:>5} {f.processes:>9} {f.pss_mb:>7} {f.pss_mb_per_flow:>11} {f.idle_cpu_pct:>10}")


if __name__ == "__main__":
    main()
