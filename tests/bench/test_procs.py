"""bench.procs: a measured child's CPU counts descendants that wait4 never reaches."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from pathlib import Path

from bench.procs import Child, tree_cpu_seconds

# The child forks a grandchild that burns CPU and is never reaped by it, as the standalone runner's tasks are
# children of multiprocessing's fork server; on SIGTERM the child exits at once.
CHILD = """
import os, signal, time
if os.fork() == 0:
    end = time.process_time() + 1.0
    while time.process_time() < end:
        pass
    time.sleep(120)
    os._exit(0)
signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
time.sleep(120)
"""


def test_cpu_of_a_descendant_the_child_never_reaped_is_counted(tmp_path: Path) -> None:
    child = Child([sys.executable, "-c", CHILD], tmp_path / "child.log")
    try:
        deadline = time.monotonic() + 30
        # /proc counts whole clock ticks, so a 1.0 s burn may read a tick short: wait for 0.8 s of it.
        while tree_cpu_seconds(child.pid) < 0.8 and time.monotonic() < deadline:
            time.sleep(0.05)
        usage = child.stop()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)  # the grandchild, in the child's session
    assert usage.exit_code == 0
    assert usage.cpu_seconds >= 0.8  # wait4 alone reaches only the child's own few hundredths
