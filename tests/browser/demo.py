"""`manage.py demo` as a new user runs it: SQLite, the embedded Celery transport, one worker, its own clusters."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from playwright.sync_api import Page

from tests.support import workers

REPO = Path(__file__).resolve().parents[2]
# Below the ephemeral range and apart from every other fixed port of the project (docs/local-kafka.md, ports).
DEMO_WEB_PORT = workers.port(int(os.environ.get("MIRRORPLANE_DEMO_TEST_WEB_PORT", "8610")))
DEMO_BROKER_PORT_BASE = workers.port(int(os.environ.get("MIRRORPLANE_DEMO_TEST_PORT_BASE", "26092")))
DEMO_PASSWORD = "demo-password-for-tests"
_BOOTSTRAP = re.compile(r"^([a-z-]+)=(127\.0\.0\.1:\d+)$")


@dataclass
class Demo:
    """A running `manage.py demo`: its URL, its clusters, and everything it printed."""

    process: subprocess.Popen[str]
    url: str
    state_dir: Path
    bootstraps: dict[str, str] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)

    def output(self) -> str:
        return "\n".join(self.lines)


def demo_env(state_dir: Path) -> dict[str, str]:
    """The demo's own defaults: no database or broker URL from the test run (those point at Postgres and Redis)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "CELERY_", "KAFKA_CLUSTERS"))}
    env.update(MIRRORPLANE_STATE_DIR=str(state_dir), MIRRORPLANE_DEMO_PASSWORD=DEMO_PASSWORD, PYTHONUNBUFFERED="1")
    return env


def start_demo(
    state_dir: Path,
    *extra: str,
    web_port: int = DEMO_WEB_PORT,
    broker_port_base: int = DEMO_BROKER_PORT_BASE,
    extra_env: dict[str, str] | None = None,
    timeout: float = 300.0,
) -> Demo:
    """Start the demo; `extra_env` may point it at another database and broker (DATABASE_URL, CELERY_BROKER_URL)."""
    argv = [
        sys.executable,
        "manage.py",
        "demo",
        "--port",
        str(web_port),
        "--kafka-broker-port-base",
        str(broker_port_base),
        "--kafka-zk-port-base",
        str(broker_port_base + 89),
        *extra,
    ]
    env = {**demo_env(state_dir), **(extra_env or {})}
    process = subprocess.Popen(argv, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    demo = Demo(process, f"http://127.0.0.1:{web_port}", state_dir)
    ready = threading.Event()

    def pump() -> None:
        assert process.stdout is not None
        for raw in process.stdout:
            line = raw.rstrip("\n")
            demo.lines.append(line)
            if match := _BOOTSTRAP.match(line.strip()):
                demo.bootstraps[match.group(1)] = match.group(2)
            if "Mirrorplane is running at" in line:
                ready.set()

    threading.Thread(target=pump, daemon=True, name="demo-output").start()
    deadline = time.monotonic() + timeout
    while not ready.wait(0.5):
        if process.poll() is not None or time.monotonic() > deadline:
            stop_demo(demo)
            raise AssertionError(f"the demo did not start:\n{demo.output()[-4000:]}")
    return demo


def stop_demo(demo: Demo, timeout: float = 120.0) -> int:
    """Ctrl-C, as a user stops it; returns its exit code."""
    if demo.process.poll() is None:
        demo.process.send_signal(signal.SIGINT)
    try:
        return demo.process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        demo.process.kill()
        return demo.process.wait()


@contextmanager
def running_demo(state_dir: Path) -> Iterator[Demo]:
    """The demo for a module's tests, stopped at the end as a user stops it: cleanly, saying so, with exit code 0."""
    demo = start_demo(state_dir)
    try:
        yield demo
    finally:
        code = stop_demo(demo)
        assert "Mirrorplane demo stopped." in demo.output(), demo.output()[-3000:]
        assert code == 0, f"demo exit code {code}:\n{demo.output()[-3000:]}"


def log_in_as_admin(page: Page, base: str) -> None:
    """Log in with the demo's admin password. Logged in once the dashboard's address commits: its full load
    (Plotly's script) took over 15 s in CI while the other test process ran Spark on this 2-core machine, and
    nothing here needs the dashboard loaded."""
    page.goto(f"{base}/")
    page.fill("input[name=username]", "admin")
    page.fill("input[name=password]", DEMO_PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{base}/", wait_until="commit", timeout=60_000)
