"""Real Celery workers and beat on Redis against the Postgres test database, for integration and browser tests.

Use the fixtures ``celery_env`` (the environment the processes get) and ``celery_processes`` (started processes,
stopped with SIGTERM at teardown, SIGKILLed if they linger), and ``start_celery`` to start them.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from django.db import connection

from tests.support import workers

REPO = Path(__file__).resolve().parents[2]
# Flushed: one per parallel run, and one per xdist worker.
BROKER_DB = workers.redis_db(int(os.environ.get("MIRRORPLANE_TEST_WORKER_REDIS_DB", "14")))
LEASE_SECONDS = 4
Processes = dict[str, subprocess.Popen[bytes]]


@pytest.fixture
def celery_env(tmp_path: Path) -> dict[str, str]:
    if connection.vendor != "postgresql":
        pytest.skip("worker processes need a shared server database (make test uses Postgres)")
    redis.Redis(host="127.0.0.1", port=6379, db=BROKER_DB).flushdb()
    db = connection.settings_dict
    return {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "CELERY_BROKER_URL": f"redis://127.0.0.1:6379/{BROKER_DB}",
        "MIRRORPLANE_LEASE_SECONDS": str(LEASE_SECONDS),
        "MIRRORPLANE_CONTROLLER_INTERVAL_SECONDS": "1",
        "MIRRORPLANE_RETRY_SECONDS": "2",
        "MIRRORPLANE_STATE_DIR": str(tmp_path / "state"),
    }


@pytest.fixture
def celery_processes() -> Iterator[Processes]:
    procs: Processes = {}
    yield procs
    for proc in procs.values():
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    for proc in procs.values():
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    redis.Redis(host="127.0.0.1", port=6379, db=BROKER_DB).flushdb()


def _celery(env: dict[str, str], log: Path, *args: str) -> subprocess.Popen[bytes]:
    with open(log, "ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "controlplane", *args],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def start_celery(
    env: dict[str, str], procs: Processes, logs: Path, *names: str, concurrency: int = 3, pool: str = "prefork"
) -> None:
    """Start ``beat`` and/or workers by name (``w1``, ...) on Celery's `pool`; logs go to ``logs/<name>.log``."""
    for name in names:
        if name == "beat":
            procs[name] = _celery(env, logs / "beat.log", "beat", "-l", "info", "-s", str(logs / "schedule"))
        else:
            procs[name] = _celery(
                env,
                logs / f"{name}.log",
                "worker",
                "-n",
                f"{name}@%h",
                "-c",
                str(concurrency),
                "-l",
                "info",
                "--without-gossip",
                "--without-mingle",
                "--pool",
                pool,
            )
