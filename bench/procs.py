"""Child processes under measurement: CPU from wait4's rusage at exit, and from /proc while they run."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Usage:
    """A child's exit code and CPU: the larger of wait4's rusage (the child and every descendant it reaped) and its
    process tree's CPU read from /proc last before it ended. The second counts descendants that were never reaped
    into the child, such as the standalone runner's tasks, children of multiprocessing's fork server.

    Not its ru_maxrss: Linux carries the forking parent's high-water mark across exec, so a child forked from a
    big bench process would report the bench's memory. tree_peak_rss_mb reads each process's own VmHWM instead.
    """

    exit_code: int
    cpu_seconds: float


def _stat_fields(pid: int) -> list[str] | None:
    parsed = _stat(Path(f"/proc/{pid}/stat"))
    return None if parsed is None else parsed[1]


def _stat(path: Path) -> tuple[str, list[str]] | None:
    """A /proc stat file's comm and the fields after "pid (comm) ", state first; None once the process is gone."""
    try:
        text = path.read_text()
    except OSError:
        return None
    return text[text.index("(") + 1 : text.rindex(")")], text[text.rindex(")") + 2 :].split()


def thread_cpu_seconds(pid: int) -> list[tuple[int, str, float]]:
    """(thread id, thread name, user + system CPU seconds) of every live thread of pid."""
    threads = []
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            parsed = _stat(task / "stat")
            if parsed is not None:
                name, fields = parsed
                threads.append((int(task.name), name, (int(fields[11]) + int(fields[12])) / CLOCK_TICKS))
    return threads


def process_tree(root: int) -> set[int]:
    """root and its live descendants."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := _stat_fields(int(entry.name))) is not None:
            parents[int(entry.name)] = int(fields[1])
    tree, frontier = {root}, [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent and pid not in tree]
        tree.update(children)
        frontier.extend(children)
    return tree


def tree_cpu_seconds(root: int) -> float:
    """CPU seconds so far of root and its live descendants (their reaped children included)."""
    return sum(_own_and_reaped_cpu(pid) for pid in process_tree(root))


def tree_peak_rss_mb(root: int) -> float:
    """Sum of each live process's peak resident memory (VmHWM) in the tree of root."""
    return sum(_peak_rss_kb(pid) for pid in process_tree(root)) / 1024


def tree_pss_mb(root: int) -> float:
    """Sum of each live process's proportional set size (Pss) in the tree of root: pages shared between processes
    (a forked parent's, libraries) count once in the sum, unlike VmRSS."""
    return sum(_smaps_kb(pid, "Pss:") for pid in process_tree(root)) / 1024


def _smaps_kb(pid: int, field: str) -> int:
    try:
        rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return 0
    line = next((line for line in rollup.splitlines() if line.startswith(field)), f"{field} 0 kB")
    return int(line.split()[1])


def _peak_rss_kb(pid: int) -> int:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    line = next((line for line in status.splitlines() if line.startswith("VmHWM:")), "VmHWM: 0 kB")
    return int(line.split()[1])


def _own_and_reaped_cpu(pid: int) -> float:
    fields = _stat_fields(pid)
    if fields is None:
        return 0.0
    utime, stime, cutime, cstime = (int(fields[i]) for i in (11, 12, 13, 14))
    return (utime + stime + cutime + cstime) / CLOCK_TICKS


def machine_busy() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine since boot, from /proc/stat."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    return (sum(values[:8]) - idle) / CLOCK_TICKS, sum(values[:8]) / CLOCK_TICKS


class Child:
    """A measured child process: its output goes to a log file; stop() sends SIGTERM and collects rusage."""

    def __init__(
        self, argv: list[str], log_path: Path, cwd: Path | None = None, env: dict[str, str] | None = None
    ) -> None:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self.log_path = log_path
        self.started = time.monotonic()
        with open(log_path, "wb") as out:
            self.proc = subprocess.Popen(
                argv,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                cwd=cwd,
                env=env,
                start_new_session=True,
            )
        self.pid = self.proc.pid
        self.usage: Usage | None = None
        self._tree_cpu = 0.0  # the process tree's CPU when last read, for descendants wait4 does not reach

    def running(self) -> bool:
        """Alive and not a zombie; read from /proc, because reaping it here would lose wait4's rusage."""
        fields = None if self.usage is not None else _stat_fields(self.pid)
        return fields is not None and fields[0] != "Z"

    def stop(self, timeout: float = 60.0) -> Usage:
        """SIGTERM, wait for a clean exit (SIGKILL after timeout), and return what wait4 measured."""
        if self.usage is None:
            if self.running():
                self._tree_cpu = tree_cpu_seconds(self.pid)
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGTERM)
            self.usage = self._wait4(timeout)
        return self.usage

    def join(self, timeout: float) -> Usage:
        """Wait for the child to exit by itself; stop() it after timeout."""
        deadline = time.monotonic() + timeout
        next_read = 0.0
        while self.running() and time.monotonic() < deadline:
            if time.monotonic() >= next_read:  # a child that ends by itself takes its tree with it
                self._tree_cpu, next_read = tree_cpu_seconds(self.pid), time.monotonic() + 1.0
            time.sleep(0.1)
        return self.stop()

    def _wait4(self, timeout: float) -> Usage:
        deadline = time.monotonic() + timeout
        while True:
            pid, status, rusage = os.wait4(self.pid, os.WNOHANG)
            if pid == self.pid:
                break
            if time.monotonic() > deadline:
                os.kill(self.pid, signal.SIGKILL)
                deadline = float("inf")
            time.sleep(0.05)
        self.proc.returncode = os.waitstatus_to_exitcode(status)
        return Usage(self.proc.returncode, max(rusage.ru_utime + rusage.ru_stime, self._tree_cpu))

    def log_tail(self, lines: int = 30) -> str:
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
