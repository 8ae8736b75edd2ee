"""One bad cluster never slows the rest: the control plane on the demo's defaults beside clusters that fail.

    python -m bench.isolation [--seconds 300] [--source HOST:PORT --target HOST:PORT] [--state DIR]

A fresh state directory with the demo's embedded defaults (SQLite, the spool transport, one worker on the threads
pool with the demo's 12 slots and concurrency 16, beat with its controller) runs against:

- two healthy clusters (``--source``/``--target``, or a pair of local clusters this starts) with a live flow of one
  topic, written at --rate records/s all along;
- three unreachable clusters: a closed port (refused), a port that accepts connections and never answers (a hung
  broker, served by this process), and a name that does not resolve; the hung one is the source of a flow;
- one cluster with bad credentials: SASL/SCRAM with a wrong password against the healthy target's PLAINTEXT
  listener (every handshake fails), the source of a flow as well.

Over --seconds it queues a latency report every --report-every seconds and measures what the criteria name:

- the controller's ticks (``ControllerRun``): how many, how many late (begun more than 1.5 intervals after the one
  before) and the longest;
- each report's wait from queued to started;
- the healthy flow's lag, as the brokers count it (records at the source minus records at the remote topic), every
  2 s; the bound is what the traffic writes in --lag-bound-seconds;
- the worker's log lines per minute (its whole output).

Prints the figures as JSON and says, for each criterion, whether it held. ``run()`` returns them for the test.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path

from confluent_kafka import KafkaException, Producer

from bench.kafkaops import admin, wait_for
from bench.procs import Child
from bench.scale import _create, _target_total
from bench.worker_memory import demo_env

REPO = Path(__file__).resolve().parent.parent
SLOTS = 12  # the demo's (controlplane/demo/management/commands/demo.py), with concurrency SLOTS + 4
TOPIC = "iso-orders"
CONTROLLER_INTERVAL_SECONDS = 2.0  # the default, MIRRORPLANE_CONTROLLER_INTERVAL_SECONDS

SEED = """
from django.contrib.auth.models import User
from controlplane.clusters.models import Cluster
from controlplane.clusters.crypto import encrypt
from controlplane.flows.models import Flow
User.objects.create_superuser("bench", password="bench-isolation")
west = Cluster.objects.create(alias="healthy-src", bootstrap_servers={src!r})
east = Cluster.objects.create(alias="healthy-dst", bootstrap_servers={dst!r})
Cluster.objects.create(alias="refused", bootstrap_servers={refused!r})
hung = Cluster.objects.create(alias="hung", bootstrap_servers={hung!r})
Cluster.objects.create(alias="no-such-host", bootstrap_servers="no-such-broker.invalid:9092")
bad = Cluster.objects.create(
    alias="bad-credentials", bootstrap_servers={dst!r}, security_protocol="SASL_PLAINTEXT",
    sasl_mechanism="SCRAM-SHA-512", sasl_username="replicator", sasl_password_encrypted=encrypt("wrong-password"),
)
Flow.objects.create(source=west, target=east, topics=[{topic!r}])
Flow.objects.create(source=hung, target=east, topics=["orders"])
Flow.objects.create(source=bad, target=west, topics=["orders"])
"""

QUEUE_REPORT = """
from django.contrib.auth.models import User
from controlplane.reports import services
from controlplane.reports.tasks import run_report
report = services.submit("latency", requested_by=User.objects.get(username="bench"))
run_report.delay(report.pk)
"""


@dataclass
class Figures:
    seconds: float
    controller_ticks: int = 0
    controller_ticks_expected: int = 0
    controller_late_ticks: int = 0
    controller_longest_tick_s: float = 0.0
    report_waits_s: list[float | None] = field(default_factory=list)
    lag_samples: int = 0
    max_lag_records: int | None = None
    lag_bound_records: int = 0
    records_copied: int = 0
    worker_lines: int = 0
    worker_lines_per_minute: float = 0.0
    held: dict[str, bool] = field(default_factory=dict)


@contextlib.contextmanager
def hung_broker() -> Iterator[str]:
    """A port that accepts connections and never answers: a broker that hangs (not one that refuses)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(128)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.5)
        while not stop.is_set():
            with contextlib.suppress(OSError):
                accepted.append(server.accept()[0])

    thread = threading.Thread(target=accept, daemon=True, name="hung-broker")
    thread.start()
    try:
        yield f"127.0.0.1:{server.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(2)
        for conn in accepted:
            conn.close()
        server.close()


def closed_port() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{probe.getsockname()[1]}"


def run(
    source: str,
    target: str,
    state: Path,
    seconds: float = 300.0,
    rate: int = 20,
    report_every: float = 60.0,
    lag_bound_seconds: float = 10.0,
) -> Figures:
    state.mkdir(parents=True, exist_ok=True)
    env = demo_env(state, SLOTS)
    if TOPIC not in admin(source).list_topics(timeout=30).topics:
        _create(source, [TOPIC])
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=REPO, env=env, check=True)
    with hung_broker() as hung:
        seed = SEED.format(src=source, dst=target, refused=closed_port(), hung=hung, topic=TOPIC)
        subprocess.run([sys.executable, "manage.py", "shell", "-c", seed], cwd=REPO, env=env, check=True)
        celery = [sys.executable, "-m", "celery", "-A", "controlplane"]
        pool = ["--pool", "threads", "--concurrency", str(SLOTS + 4)]
        worker = Child([*celery, "worker", "-l", "info", *pool], state / "worker.log", cwd=REPO, env=env)
        beat = Child(
            [*celery, "beat", "-l", "info", "--schedule", str(state / "schedule")], state / "beat.log", REPO, env
        )
        traffic = _Traffic(source, rate)
        try:
            db = state / "db.sqlite3"
            remote = f"healthy-src.{TOPIC}"
            wait_for(lambda: (_records(target, remote) or 0) > 0, 180, "the healthy flow copying", 1)
            return _measure(db, source, target, remote, env, seconds, rate, report_every, lag_bound_seconds, worker)
        finally:
            traffic.stop()
            worker.stop(120)
            beat.stop()


def _measure(
    db: Path,
    source: str,
    target: str,
    remote: str,
    env: dict[str, str],
    seconds: float,
    rate: int,
    report_every: float,
    lag_bound_seconds: float,
    worker: Child,
) -> Figures:
    figures = Figures(seconds=seconds, lag_bound_records=int(rate * lag_bound_seconds))
    ticks_before = _controller(db)
    lines_before = _lines(worker)
    copied_before = _records(target, remote) or 0
    started = time.monotonic()
    next_report = started
    lags: list[int] = []
    queued: list[int] = []
    while (now := time.monotonic()) < started + seconds:
        if now >= next_report:
            queued.append(_queue_report(env, db))
            next_report += report_every
        produced, copied = _records(source, TOPIC), _records(target, remote)
        if produced is not None and copied is not None:
            lags.append(produced - copied)
        time.sleep(2.0)
    elapsed = time.monotonic() - started
    ticks_after = _controller(db)
    figures.seconds = round(elapsed, 1)
    figures.controller_ticks = ticks_after[0] - ticks_before[0]
    figures.controller_ticks_expected = int(elapsed / CONTROLLER_INTERVAL_SECONDS)
    figures.controller_late_ticks = ticks_after[1] - ticks_before[1]
    figures.controller_longest_tick_s = round(ticks_after[2], 3)
    wait_for(lambda: all(_report_wait(db, pk) is not None for pk in queued), 60, "every report started", 1)
    figures.report_waits_s = [_report_wait(db, pk) for pk in queued]
    figures.records_copied = (_records(target, remote) or 0) - copied_before
    figures.lag_samples = len(lags)
    figures.max_lag_records = max(lags) if lags else None
    figures.worker_lines = _lines(worker) - lines_before
    figures.worker_lines_per_minute = round(figures.worker_lines * 60 / elapsed, 1)
    waits = [w for w in figures.report_waits_s if w is not None]
    figures.held = {
        "every controller tick on time": figures.controller_late_ticks == 0
        and figures.controller_ticks >= 0.9 * figures.controller_ticks_expected,
        "every report started within 10 s": bool(waits) and len(waits) == len(queued) and max(waits) <= 10.0,
        "healthy flow's lag under its bound": figures.max_lag_records is not None
        and figures.max_lag_records <= figures.lag_bound_records
        and figures.records_copied >= 0.9 * rate * elapsed,
        "worker logs under 100 lines a minute": figures.worker_lines_per_minute < 100,
    }
    return figures


def _records(bootstrap: str, topic: str) -> int | None:
    """Records in the topic (summed end offsets), None when the brokers did not say (a leader not ready yet)."""
    try:
        return _target_total(bootstrap, [topic])
    except KafkaException:
        return None


def _controller(db: Path) -> tuple[int, int, float]:
    with contextlib.closing(sqlite3.connect(db, timeout=30)) as conn:
        row = conn.execute(
            "SELECT ticks, late_ticks, longest_tick_seconds FROM orchestration_controllerrun WHERE id = 1"
        ).fetchone()
    return (int(row[0]), int(row[1]), float(row[2])) if row else (0, 0, 0.0)


def _queue_report(env: dict[str, str], db: Path) -> int:
    subprocess.run([sys.executable, "manage.py", "shell", "-c", QUEUE_REPORT], cwd=REPO, env=env, check=True)
    with contextlib.closing(sqlite3.connect(db, timeout=30)) as conn:
        return int(conn.execute("SELECT MAX(id) FROM reports_report").fetchone()[0])


def _report_wait(db: Path, pk: int) -> float | None:
    with contextlib.closing(sqlite3.connect(db, timeout=30)) as conn:
        created, started = conn.execute(
            "SELECT created_at, started_at FROM reports_report WHERE id = ?", (pk,)
        ).fetchone()
    if started is None:
        return None
    return round((datetime.fromisoformat(started) - datetime.fromisoformat(created)).total_seconds(), 2)


def _lines(worker: Child) -> int:
    return len(worker.log_path.read_text(errors="replace").splitlines()) if worker.log_path.exists() else 0


class _Traffic:
    """The healthy source's topic written at a steady rate by a thread of this process."""

    def __init__(self, bootstrap: str, rate: int) -> None:
        self._stop = threading.Event()
        self._producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
        self._thread = threading.Thread(target=self._run, args=(rate,), daemon=True, name="traffic")
        self._thread.start()

    def _run(self, rate: int) -> None:
        sent = 0
        began = time.monotonic()
        while not self._stop.is_set():
            due = int((time.monotonic() - began) * rate)
            for _ in range(due - sent):
                self._producer.produce(TOPIC, f"order-{sent}".encode())
                sent += 1
            self._producer.poll(0.05)
        self._producer.flush(30)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(60)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=300.0)
    parser.add_argument("--rate", type=int, default=20, help="records/s written to the healthy flow's topic")
    parser.add_argument("--report-every", type=float, default=60.0)
    parser.add_argument("--lag-bound-seconds", type=float, default=10.0)
    parser.add_argument("--source", help="a healthy cluster's bootstrap servers (default: start a local pair)")
    parser.add_argument("--target")
    parser.add_argument("--state", default=str(REPO / "var" / "bench-isolation" / time.strftime("%Y%m%d-%H%M%S")))
    args = parser.parse_args(argv)
    options = {"seconds": args.seconds, "rate": args.rate, "report_every": args.report_every}
    if args.source and args.target:
        figures = run(args.source, args.target, Path(args.state), lag_bound_seconds=args.lag_bound_seconds, **options)
    else:
        from bench.clusters import bench_clusters

        with bench_clusters() as clusters:
            figures = run(
                clusters.source, clusters.target, Path(args.state), lag_bound_seconds=args.lag_bound_seconds, **options
            )
    print(json.dumps(asdict(figures), indent=2))
    for criterion, held in figures.held.items():
        print(f"{'held  ' if held else 'FAILED'} {criterion}")


if __name__ == "__main__":
    main()
