from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from controlplane.demo.processes import ProcessGroup

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

REPO = Path(__file__).resolve().parents[2]


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_for(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met before the deadline"
        time.sleep(0.05)


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def start(group: ProcessGroup, name: str, code: str) -> int:
    return group.start(name, python(code), cwd=REPO, env=os.environ).pid


def test_stop_ends_children_and_the_processes_they_spawned(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    group = ProcessGroup(stop_timeout=5)
    child = start(
        group,
        "parent",
        "import subprocess, sys, time\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(p.pid))\n"
        "time.sleep(600)\n",
    )
    wait_for(lambda: pid_file.exists() and pid_file.read_text() != "")
    grandchild = int(pid_file.read_text())

    group.stop()

    assert not alive(child)
    wait_for(lambda: not alive(grandchild), timeout=5)


def test_a_child_ignoring_sigterm_is_killed_after_the_timeout(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    group = ProcessGroup(stop_timeout=0.5)
    start(
        group,
        "stubborn",
        f"import signal, time, pathlib\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        f"pathlib.Path({str(ready)!r}).touch()\ntime.sleep(600)\n",
    )
    wait_for(ready.exists)

    started = time.monotonic()
    group.stop()

    assert time.monotonic() - started < 5
    assert group.children[0].popen.returncode == -signal.SIGKILL


def test_exited_names_the_first_child_that_ended() -> None:
    with ProcessGroup(stop_timeout=5) as group:
        start(group, "sleeper", "import time; time.sleep(600)")
        start(group, "quitter", "raise SystemExit(3)")
        wait_for(lambda: group.exited() is not None)
        dead = group.exited()
        assert dead is not None
        assert (dead.name, dead.popen.returncode) == ("quitter", 3)


def test_children_are_terminated_when_the_supervisor_is_killed(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    supervisor = subprocess.Popen(
        python(
            "import os, pathlib, sys, time\n"
            "from controlplane.demo.processes import ProcessGroup\n"
            "group = ProcessGroup()\n"
            "child = group.start('sleeper', [sys.executable, '-c', 'import time; time.sleep(600)'],"
            " cwd=pathlib.Path('.'), env=os.environ)\n"
            f"pathlib.Path({str(pid_file)!r}).write_text(str(child.pid))\n"
            "time.sleep(600)\n"
        ),
        cwd=REPO,
    )
    try:
        wait_for(lambda: pid_file.exists() and pid_file.read_text() != "")
        child = int(pid_file.read_text())
        supervisor.kill()
        supervisor.wait()
        wait_for(lambda: not alive(child), timeout=10)
    finally:
        supervisor.kill()
