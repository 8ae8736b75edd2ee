"""Side emitters of a flow (heartbeats, checkpoints, group offset sync), each run every its own interval.

Each is a plain object with `run_once()`, `interval` (seconds) and `close()`: the control plane runs them as
periodic jobs, the standalone runner with `SideEmitters`, one thread beside task 0. `interval` is asked after
each run and counts from then: an emitter may ask to be back sooner.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Protocol

from replication.config import FlowConfig
from replication.emitters.checkpoints import CheckpointEmitter
from replication.emitters.groupsync import GroupOffsetSync
from replication.emitters.heartbeats import HeartbeatEmitter

log = logging.getLogger(__name__)


class Periodic(Protocol):
    @property
    def interval(self) -> float: ...

    def run_once(self) -> bool: ...
    def close(self) -> None: ...


class StopFlag(Protocol):
    def is_set(self) -> bool: ...
    def wait(self, timeout: float | None = None) -> bool: ...


def side_emitters(flow: FlowConfig) -> list[Periodic]:
    """The flow's enabled side emitters."""
    emitters: list[Periodic] = []
    if flow.emit_heartbeats_enabled:
        emitters.append(HeartbeatEmitter(flow))
    if flow.emit_checkpoints_enabled:
        emitters.append(CheckpointSchedule(CheckpointEmitter(flow)))
    if flow.sync_group_offsets_enabled:
        emitters.append(GroupOffsetSync(flow))
    return emitters


def run_periodically(
    emitters: list[Periodic], stopping: StopFlag, clock: Callable[[], float] = time.monotonic, name: str = ""
) -> None:
    """Run each emitter when due until stopping is set; a failed round is logged and retried next interval."""
    due = [clock()] * len(emitters)
    try:
        while not stopping.is_set():
            now = clock()
            for i, emitter in enumerate(emitters):
                if now >= due[i]:
                    _run(emitter, name)
                    due[i] = clock() + emitter.interval
            # Until the next one is due: woken at once by a stop (an idle 10 Hz poll here was part of an idle
            # worker's CPU, `python -m bench.worker_idle`, bench/README.md).
            stopping.wait(max(0.0, min(due, default=now + 1.0) - clock()))
    finally:
        for emitter in emitters:
            _close(emitter, name)


def _run(emitter: Periodic, name: str) -> None:
    try:
        emitter.run_once()
    except Exception:  # one failed round must not end heartbeats or checkpoints for good
        log.exception("%s: %s failed; retrying next interval", name, type(emitter).__name__)


def _close(emitter: Periodic, name: str) -> None:
    try:
        emitter.close()
    except Exception:
        log.exception("%s: closing %s failed", name, type(emitter).__name__)


class CheckpointSchedule:
    """Full checkpoint rounds every emit.checkpoints.interval.seconds; between them, while some group offsets
    wait for their offset syncs, cheap retries every `retry_interval` (a commit at the live tip is checkpointed
    as soon as its sync is written, not a whole interval later)."""

    def __init__(self, emitter: CheckpointEmitter, clock: Callable[[], float] = time.monotonic) -> None:
        self.emitter = emitter
        self.clock = clock
        self._next_round = clock()

    @property
    def interval(self) -> float:
        until_round = max(0.0, self._next_round - self.clock())
        return min(until_round, self.emitter.retry_interval) if self.emitter.untranslated else until_round

    def run_once(self) -> bool:
        now = self.clock()
        if now < self._next_round:
            return self.emitter.retry_untranslated()
        self._next_round = now + self.emitter.emit_interval
        return self.emitter.run_once()

    def close(self) -> None:
        self.emitter.close()


class SideEmitters:
    """A thread running a flow's side emitters until the task stops."""

    def __init__(self, flow: FlowConfig, stopping: StopFlag) -> None:
        self.emitters = side_emitters(flow)
        self._outer = stopping
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=run_periodically,
            args=(self.emitters, self, time.monotonic, flow.name),
            daemon=True,
            name=f"{flow.name}-side-emitters",
        )

    def is_set(self) -> bool:
        return self._stop.is_set() or self._outer.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Sleeps until `stop()` or the timeout: the task's own stop flag is read at each wake-up (its runner calls
        `stop()` as it ends)."""
        self._stop.wait(timeout)
        return self.is_set()

    def start(self) -> SideEmitters:
        if self.emitters:
            self._thread.start()
        return self

    def stop(self, timeout: float = 60.0) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)
