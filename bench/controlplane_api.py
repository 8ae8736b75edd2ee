"""Control-plane API latency at scale: p50/p99 of the list, status and dashboard endpoints.

    python -m bench.controlplane_api [--clusters 50] [--flows 2000] [--partitions 10000] [--requests 300]

Seeds `--flows` flows of 8 partitions each, plus one flow of `--partitions` partitions in 4 tasks (issue 17's 10k),
every task's report stored as a running task stores it (services/reports.py).

Runs the real Django stack in-process (WSGI test client, no network) on a fresh SQLite database under
var/bench-api unless DATABASE_URL is set. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def _setup_django(state: Path) -> None:
    state.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{state / 'bench.sqlite3'}")
    os.environ.setdefault("MIRRORPLANE_STATE_DIR", str(state))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "controlplane.settings")
    sys.path.insert(0, str(REPO))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("flush", interactive=False, verbosity=0) if _has_tables() else None
    call_command("migrate", interactive=False, verbosity=0)


def _has_tables() -> bool:
    from django.db import connection

    return "clusters_cluster" in connection.introspection.table_names()


def _seed(clusters: int, flows: int) -> list[int]:
    from controlplane.clusters.models import Cluster
    from controlplane.flows.models import Flow
    from controlplane.orchestration.models import TaskAssignment
    from controlplane.orchestration.services.reports import Reporter
    from replication.metrics.registry import MetricsRegistry

    objs = Cluster.objects.bulk_create(
        Cluster(alias=f"c{i:03d}", bootstrap_servers=f"10.0.{i // 200}.{i % 200}:9092") for i in range(clusters)
    )
    pairs = [(a, b) for a in objs for b in objs if a != b][:flows]
    created = Flow.objects.bulk_create(Flow(source=a, target=b, topics=["orders.*"]) for a, b in pairs)
    registry = MetricsRegistry()
    for p in range(8):
        registry.record_batch("x", "orders", p, 1000, 100_000, 12.0, 3.0)
        registry.set_lag("x", "orders", p, 42)
    snapshot = registry.snapshot()["flows"]["x"]
    tasks = TaskAssignment.objects.bulk_create(
        TaskAssignment(flow=f, task_id=0, partitions=[["orders", p] for p in range(8)]) for f in created
    )
    for task in tasks:
        _store(task, snapshot, Reporter)
    return [f.pk for f in created]


def _store(task: Any, snapshot: Any, reporter_class: Any) -> None:
    from controlplane.orchestration.models import TaskAssignment

    reporter = reporter_class(task.flow_id, task.pk, "x", task.task_id)
    reported = [[p["topic"], p["partition"]] for p in snapshot["partitions"].values()]
    TaskAssignment.objects.filter(pk=task.pk).update(**reporter.assignment_fields(snapshot, reported))
    reporter.write_partitions(snapshot)


def _seed_big(partitions: int, tasks: int = 4) -> int:
    """One flow of ``partitions`` partitions (topics of 10) in ``tasks`` tasks, each having reported them all."""
    from controlplane.clusters.models import Cluster
    from controlplane.flows.models import Flow
    from controlplane.orchestration.models import TaskAssignment
    from controlplane.orchestration.services.reports import Reporter
    from replication.metrics.registry import MetricsRegistry

    a = Cluster.objects.create(alias="big-src", bootstrap_servers="10.1.0.1:9092")
    b = Cluster.objects.create(alias="big-dst", bootstrap_servers="10.1.0.2:9092")
    big = Flow.objects.create(source=a, target=b, topics=["t.*"], tasks_max=tasks)
    tps = [(f"t{n // 10:04d}", n % 10) for n in range(partitions)]
    for task_id in range(tasks):
        mine = tps[task_id::tasks]
        registry = MetricsRegistry()
        for topic, p in mine:
            registry.record_batch("x", topic, p, 100, 10_000, 9.0, 2.0)
            registry.set_lag("x", topic, p, p)
            registry.set_position("x", topic, p, 1000)
        task = TaskAssignment.objects.create(flow=big, task_id=task_id, partitions=[list(tp) for tp in mine])
        _store(task, registry.snapshot()["flows"]["x"], Reporter)
    return int(big.pk)


def _client() -> Any:
    from django.contrib.auth.models import User
    from rest_framework.test import APIClient

    client = APIClient(SERVER_NAME="127.0.0.1")
    client.force_authenticate(User.objects.create_superuser(f"bench-{time.time_ns()}", password="x"))
    return client


def _time(client: Any, urls: list[str]) -> list[float]:
    samples = []
    for url in urls:
        start = time.perf_counter()
        response = client.get(url)
        samples.append((time.perf_counter() - start) * 1000)
        if response.status_code != 200:
            raise SystemExit(f"{url}: HTTP {response.status_code}")
    return samples


def _report(name: str, samples: list[float]) -> None:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    print(
        f"{name:<28} n={len(samples):<5} p50={statistics.median(samples):7.1f} ms  p99={p99:7.1f} ms  "
        f"max={ordered[-1]:7.1f} ms"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clusters", type=int, default=50)
    parser.add_argument("--flows", type=int, default=2000)
    parser.add_argument("--partitions", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=300)
    args = parser.parse_args()
    _setup_django(REPO / "var" / "bench-api")
    flow_ids = _seed(args.clusters, args.flows)
    client = _client()
    _time(client, ["/api/v1/flows/"] * 5)  # warm-up: imports, caches
    print(f"{args.clusters} clusters, {len(flow_ids)} flows, {args.requests} requests per endpoint")
    few = max(20, args.requests // 10)
    _report(f"GET /api/v1/dashboard/ ({len(flow_ids)} flows)", _time(client, ["/api/v1/dashboard/"] * few))
    _report("GET /api/v1/clusters/", _time(client, ["/api/v1/clusters/"] * args.requests))
    _report("GET /api/v1/flows/", _time(client, ["/api/v1/flows/"] * args.requests))
    pages = [f"/api/v1/flows/?limit=50&offset={random.randrange(0, len(flow_ids), 50)}" for _ in range(args.requests)]
    _report("GET /api/v1/flows/?limit=50", _time(client, pages))
    status_urls = [f"/api/v1/flows/{random.choice(flow_ids)}/status/" for _ in range(args.requests)]
    _report("GET /api/v1/flows/{id}/status/", _time(client, status_urls))
    from controlplane.flows.models import Flow

    Flow.objects.filter(pk__in=flow_ids).delete()
    started = time.perf_counter()
    big = _seed_big(args.partitions)
    print(f"one flow of {args.partitions} partitions in 4 tasks (seeded in {time.perf_counter() - started:.1f} s)")
    _report("GET /api/v1/dashboard/", _time(client, ["/api/v1/dashboard/"] * few))
    _report("GET .../status/ (first 100)", _time(client, [f"/api/v1/flows/{big}/status/"] * few))
    offsets = [f"/api/v1/flows/{big}/status/?offset={random.randrange(args.partitions)}" for _ in range(few)]
    _report("GET .../status/?offset=N", _time(client, offsets))
    _report("GET .../status/?order=-lag", _time(client, [f"/api/v1/flows/{big}/status/?order=-lag"] * few))
    _report("GET /metrics", _time(client, ["/metrics"] * 5))
    return 0


if __name__ == "__main__":
    sys.exit(main())
