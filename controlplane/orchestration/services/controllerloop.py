"""The controller's own thread: a tick every MIRRORPLANE_CONTROLLER_INTERVAL_SECONDS, in beat's process.

Ticks used to be Celery jobs that beat queued for the workers. Behind slow jobs (heartbeat reads of unreachable
clusters, report runs) they waited for a pool slot and expired: on a worker of concurrency 3, 168 ticks were dropped
in minutes, and no task was placed or restarted meanwhile. Beat is one process per deployment, which is what the
controller must be; a thread of its own there waits for no job. The sources are listed off this thread
(``controller.SourceListings``), so an unreachable source delays only its own flow's new partitions.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from pathlib import Path

from django.db import close_old_connections
from django.db.models import F
from django.db.models.functions import Greatest
from django.utils import timezone

from controlplane.orchestration.models import ControllerRun
from controlplane.orchestration.services import controller

log = logging.getLogger(__name__)


def run(stop: threading.Event, interval: float, lock_path: Path) -> None:
    """Tick every ``interval`` seconds until ``stop`` is set or the process exits (its main thread ended). A tick
    that overran is followed at once by the next; the missed ones are not made up. A tick that began more than 1.5
    intervals after the one before counts as late."""
    listings = controller.SourceListings()
    ControllerRun.objects.update_or_create(
        pk=1,
        defaults={
            "host": socket.gethostname(),
            "started_at": timezone.now(),
            "ticked_at": None,
            "ticks": 0,
            "late_ticks": 0,
            "longest_tick_seconds": 0.0,
        },
    )
    log.info("controller: ticking every %g s", interval)
    due = time.monotonic()
    previous: float | None = None
    try:
        while not stop.wait(max(0.0, due - time.monotonic())) and not listings.closed:
            started = time.monotonic()
            try:
                controller.tick_alone(lock_path, listings)
            except Exception:  # the loop outlives a failed tick: the next one tries again
                log.exception("controller: tick failed")
            took = time.monotonic() - started
            _record(late=previous is not None and started - previous > 1.5 * interval, took=took)
            previous = started
            close_old_connections()
            due = max(due + interval, time.monotonic())
    finally:
        listings.close()


def _record(late: bool, took: float) -> None:
    try:
        ControllerRun.objects.filter(pk=1).update(
            ticked_at=timezone.now(),
            ticks=F("ticks") + 1,
            late_ticks=F("late_ticks") + int(late),
            longest_tick_seconds=Greatest(F("longest_tick_seconds"), took),
        )
    except Exception:  # a busy database must not end the loop
        log.exception("controller: tick not recorded")


def start(interval: float, lock_path: Path) -> threading.Event:
    """Run the loop in a daemon thread; returns the event that stops it."""
    stop = threading.Event()
    thread = threading.Thread(target=run, args=(stop, interval, lock_path), name="controller", daemon=True)
    thread.start()
    return stop
