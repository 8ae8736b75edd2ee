"""MM2 properties import: time of ``POST /api/v1/flows/import/`` for 50 ... 2,000 clusters and as many flows.

    python -m bench.mm2_import [--sizes 50,100,200,400,2000] [--rounds 1]

Runs the real Django stack in-process (WSGI test client, no network) on a fresh SQLite database under
var/bench-import, or on the database of DATABASE_URL (flushed first: give it a scratch database). The file holds
active-active pairs (c0000 <-> c0001, ...), the usual MM2 shape. Target: 2,000 clusters and 2,000
flows in under 10 s. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGET_SECONDS = 10.0


def properties_file(clusters: int, flows: int) -> str:
    """``clusters`` clusters and ``flows`` (at most ``clusters``) flows between neighbours: i -> i xor 1."""
    lines = [f"clusters = {', '.join(_alias(i) for i in range(clusters))}", "tasks.max = 2"]
    lines += [f"{_alias(i)}.bootstrap.servers = 10.{i // 250}.{i % 250}.1:9092" for i in range(clusters)]
    for i in range(min(flows, clusters)):
        flow = f"{_alias(i)}->{_alias(i ^ 1)}"
        lines += [f"{flow}.enabled = true", f"{flow}.topics = orders.*, payments", f"{flow}.groups = .*"]
    return "\n".join(lines) + "\n"


def _alias(i: int) -> str:
    return f"c{i:04d}"


def _setup_django(state: Path) -> str:
    state.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{state / 'bench.sqlite3'}")
    os.environ.setdefault("MIRRORPLANE_STATE_DIR", str(state))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "controlplane.settings")
    sys.path.insert(0, str(REPO))
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", interactive=False, verbosity=0)
    return str(connection.vendor)


@dataclass
class _Writer:
    """Another client writing all along (an audit record every 20 ms), as the UI and the workers do: how long its
    writes wait while the import runs, and whether any fails with 'database is locked'."""

    waits: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        from django.db import OperationalError, connection

        from controlplane.audit.models import AuditRecord

        try:
            while not self.stop.is_set():
                started = time.perf_counter()
                try:
                    AuditRecord.objects.create(action="bench.write", object_type="bench")
                except OperationalError as exc:
                    self.errors.append(str(exc))
                self.waits.append(time.perf_counter() - started)
                self.stop.wait(0.02)
        finally:
            connection.close()


def _time_import(size: int) -> tuple[float, int, _Writer]:
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from rest_framework.test import APIClient

    call_command("flush", interactive=False, verbosity=0)
    admin = User.objects.create_superuser("bench-admin", password="x")
    client = APIClient(SERVER_NAME="127.0.0.1")
    client.force_authenticate(admin)
    text = properties_file(size, size)
    writer = _Writer()
    thread = threading.Thread(target=writer.run, name="other-writer")
    thread.start()
    try:
        started = time.perf_counter()
        response = client.post("/api/v1/flows/import/", text, content_type="text/plain")
        elapsed = time.perf_counter() - started
    finally:
        writer.stop.set()
        thread.join()
    if response.status_code != 201:
        raise SystemExit(f"import of {size} failed: {response.status_code} {response.content[:500]!r}")
    return elapsed, len(response.json()["flows"]), writer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="50,100,200,400,2000")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    vendor = _setup_django(REPO / "var" / "bench-import")
    print(f"MM2 import on {vendor}: clusters = flows, active-active pairs, best of {args.rounds}")
    print(
        f"{'clusters':>9} {'flows':>6} {'seconds':>8} {'ms/flow':>8} {'other writer: writes':>21} {'max wait ms':>11}"
        f" {'locked':>6}"
    )
    for size in (int(s) for s in args.sizes.split(",")):
        runs = [_time_import(size) for _ in range(args.rounds)]
        best, flows, writer = min(runs, key=lambda run: run[0])
        writes = f"{len(writer.waits):>21} {1000 * max(writer.waits, default=0):>11.0f} {len(writer.errors):>6}"
        verdict = "met" if best < TARGET_SECONDS else "MISSED"
        note = f"  target {TARGET_SECONDS:.0f} s: {verdict}" if size >= 2000 else ""
        print(f"{size:>9} {flows:>6} {best:>8.2f} {1000 * best / flows:>8.2f} {writes}{note}")


if __name__ == "__main__":
    main()
