"""Celery worker hooks: register the worker, stop its tasks cleanly at shutdown, die with the worker."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import threading
from typing import Any

from celery.signals import worker_process_init, worker_ready, worker_shutting_down

STOPPING = threading.Event()  # set in a pool process when its task must stop at once
PR_SET_PDEATHSIG = 1


@worker_ready.connect
def register_worker(sender: Any = None, **_: Any) -> None:
    from controlplane.orchestration.models import Worker

    slots = int(os.environ.get("MIRRORPLANE_WORKER_SLOTS", "4"))
    Worker.objects.update_or_create(name=sender.hostname, defaults={"stopping": False, "slots": slots})


@worker_shutting_down.connect
def mark_stopping(sender: Any = None, **_: Any) -> None:
    """Warm shutdown: running replication tasks see the flag at their next lease renewal and stop cleanly."""
    from controlplane.orchestration.models import Worker

    with contextlib.suppress(Exception):
        Worker.objects.filter(name=str(sender)).update(stopping=True)


@worker_process_init.connect
def die_with_worker(**_: Any) -> None:
    """A SIGKILLed worker must not leave pool processes replicating on: its leases then expire and move."""
    with contextlib.suppress(OSError):
        ctypes.CDLL("libc.so.6").prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    signal.signal(signal.SIGTERM, lambda *_: STOPPING.set())
