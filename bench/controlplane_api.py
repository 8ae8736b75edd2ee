"""Control-plane API latency at scale: p50/p99 of the list, status and dashboard endpoints.

    python -m bench.controlplane_api [--clusters 50] [--flows 2000] [--partitions 10000] [--requests 300]
                                     [--server gunicorn|runserver] [--port 18830]

Seeds `--flows` flows of 8 partitions each, plus one flow of `--partitions` partitions in 4 tasks (10k by default),
every task's report stored as a running task stores it (services/taskreports.py).

Times requests over HTTP, one at a time with a token, against a server process on a fresh SQLite database under
var/bench-api (or DATABASE_URL): `gunicorn` (one sync worker, debug off, as docker/ deploys it) or `runserver`
(debug on, as `make demo` runs it). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import http.client
import os
import random
import secrets
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
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
    from controlplane.orchestration.services.taskreports import Reporter
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
    from django.utils import timezone

    from controlplane.orchestration.models import TaskAssignment

    reporter = reporter_class(task.flow_id, task.pk, "x", task.task_id)
    reported = sorted([p["topic"], p["partition"]] for p in snapshot["partitions"].values())  # as runner.py does
    fields = reporter.assignment_fields(snapshot, reported)
    # A running task: its lease is live (renewed every few seconds), so its status reads as running.
    TaskAssignment.objects.filter(pk=task.pk).update(lease_expires_at=timezone.now() + timedelta(days=1), **fields)
    reporter.write_partitions(snapshot)


def _seed_big(partitions: int, tasks: int = 4) -> int:
    """One flow of ``partitions`` partitions (topics of 10) in ``tasks`` tasks, each having reported them all."""
    from controlplane.clusters.models import Cluster
    from controlplane.flows.models import Flow
    from controlplane.orchestration.models import TaskAssignment
    from controlplane.orchestration.services.taskreports import Reporter
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


def _token() -> str:
    from django.contrib.auth.models import User

    from controlplane.accounts.models import ApiToken

    user = User.objects.create_superuser(f"bench-{time.time_ns()}", password="x")
    return str(ApiToken.objects.create(user=user)[1])


@contextmanager
def _server(kind: str, port: int) -> Iterator[None]:
    """A server process on the bench's database; debug off for gunicorn, as deployed, on for the demo's runserver."""
    from cryptography.fernet import Fernet

    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    if kind == "gunicorn":
        env |= {
            "MIRRORPLANE_DEBUG": "false",
            "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
            "MIRRORPLANE_CREDENTIALS_KEY": Fernet.generate_key().decode(),
        }
        command = [sys.executable, "-m", "gunicorn", "controlplane.wsgi", "-b", f"127.0.0.1:{port}", "-w", "1"]
    else:
        command = [sys.executable, str(REPO / "manage.py"), "runserver", f"127.0.0.1:{port}", "--noreload"]
    process = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                connection.request("GET", "/healthz")
                connection.getresponse().read()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"{kind} did not answer on port {port}") from None
                time.sleep(0.2)
        yield
    finally:
        process.terminate()
        process.wait(timeout=30)


def _time(port: int, token: str, urls: list[str]) -> list[float]:
    samples = []
    headers = {"Authorization": f"Token {token}", "Host": "127.0.0.1"}
    for url in urls:
        start = time.perf_counter()
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        connection.request("GET", url, headers=headers)
        response = connection.getresponse()
        response.read()
        connection.close()
        samples.append((time.perf_counter() - start) * 1000)
        if response.status != 200:
            raise SystemExit(f"{url}: HTTP {response.status}")
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
    parser.add_argument("--server", choices=("gunicorn", "runserver"), default="gunicorn")
    parser.add_argument("--port", type=int, default=18830)
    args = parser.parse_args()
    _setup_django(REPO / "var" / "bench-api")
    flow_ids = _seed(args.clusters, args.flows)
    token = _token()
    few = max(20, args.requests // 10)
    print(f"{args.server}: {args.clusters} clusters, {len(flow_ids)} flows, {args.requests} requests per endpoint")
    with _server(args.server, args.port):
        _time(args.port, token, ["/api/v1/flows/", "/api/v1/dashboard/", f"/api/v1/flows/{flow_ids[0]}/status/"])
        _report(
            f"GET /api/v1/dashboard/ ({len(flow_ids)} flows)", _time(args.port, token, ["/api/v1/dashboard/"] * few)
        )
        _report("GET /api/v1/clusters/", _time(args.port, token, ["/api/v1/clusters/"] * args.requests))
        _report("GET /api/v1/flows/", _time(args.port, token, ["/api/v1/flows/"] * args.requests))
        pages = [
            f"/api/v1/flows/?limit=50&offset={random.randrange(0, len(flow_ids), 50)}" for _ in range(args.requests)
        ]
        _report("GET /api/v1/flows/?limit=50", _time(args.port, token, pages))
        status_urls = [f"/api/v1/flows/{random.choice(flow_ids)}/status/" for _ in range(args.requests)]
        _report("GET /api/v1/flows/{id}/status/", _time(args.port, token, status_urls))
    from controlplane.flows.models import Flow

    Flow.objects.filter(pk__in=flow_ids).delete()
    started = time.perf_counter()
    big = _seed_big(args.partitions)
    print(f"one flow of {args.partitions} partitions in 4 tasks (seeded in {time.perf_counter() - started:.1f} s)")
    status = f"/api/v1/flows/{big}/status/"
    with _server(args.server, args.port):
        _time(args.port, token, ["/api/v1/dashboard/", status])
        _report("GET /api/v1/dashboard/", _time(args.port, token, ["/api/v1/dashboard/"] * args.requests))
        _report("GET .../status/ (first 100)", _time(args.port, token, [status] * args.requests))
        offsets = [f"{status}?offset={random.randrange(args.partitions)}" for _ in range(args.requests)]
        _report("GET .../status/?offset=N", _time(args.port, token, offsets))
        _report("GET .../status/?order=-lag", _time(args.port, token, [f"{status}?order=-lag"] * args.requests))
        _report("GET /metrics", _time(args.port, token, ["/metrics"] * 5))
    return 0


if __name__ == "__main__":
    sys.exit(main())
