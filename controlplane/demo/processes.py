"""Child processes that are started together and stopped together, leaving nothing behind."""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from replication.cli.parentdeath import die_with_parent


@dataclass(frozen=True)
class Child:
    """One supervised process, known by a short name such as ``web`` or ``worker``."""

    name: str
    popen: subprocess.Popen[bytes]

    @property
    def pid(self) -> int:
        return self.popen.pid


class ProcessGroup:
    """A set of child processes, each leading its own process group.

    Children run in their own session so a terminal Ctrl-C reaches only the supervisor, which then stops
    them in order. ``stop()`` sends SIGTERM, waits up to ``stop_timeout`` seconds, then SIGKILLs each
    child's whole process group, so grandchildren (Celery pool processes) cannot outlive it. On Linux a
    child also receives SIGTERM if the supervisor dies without stopping it.
    """

    def __init__(self, stop_timeout: float = 10.0) -> None:
        self.stop_timeout = stop_timeout
        self.children: list[Child] = []

    def start(self, name: str, argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> Child:
        popen = subprocess.Popen(
            list(argv), cwd=cwd, env=dict(env), start_new_session=True, preexec_fn=_die_with_parent()
        )
        child = Child(name, popen)
        self.children.append(child)
        return child

    def exited(self) -> Child | None:
        """The first child that is no longer running, if any."""
        return next((child for child in self.children if child.popen.poll() is not None), None)

    def stop(self) -> None:
        for child in self.children:
            if child.popen.poll() is None:
                _signal(child.popen.pid, signal.SIGTERM, group=False)
        deadline = time.monotonic() + self.stop_timeout
        for child in self.children:
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.popen.wait(timeout=max(0.0, deadline - time.monotonic()))
        for child in self.children:
            # Also reaps what a child left behind in its group, even after a clean exit.
            _signal(child.popen.pid, signal.SIGKILL, group=True)
            child.popen.wait()

    def __enter__(self) -> ProcessGroup:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def _signal(pid: int, signum: signal.Signals, *, group: bool) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if group:
            os.killpg(pid, signum)
        else:
            os.kill(pid, signum)


def _die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` asking Linux to SIGTERM the child when this process dies, even by SIGKILL."""
    if not sys.platform.startswith("linux"):
        return None
    return functools.partial(die_with_parent, signal.SIGTERM, os.getpid())
