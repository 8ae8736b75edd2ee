"""Celery hooks: register a worker, stop its tasks cleanly at shutdown, die with the worker; run the controller in
beat's process."""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
from typing import Any

from celery.signals import beat_init, worker_process_init, worker_ready, worker_shutting_down
from django.conf import settings

from controlplane.orchestration.models import Worker
from controlplane.orchestration.services import capacity, controllerloop
from replication.cli.parentdeath import die_with_parent

STOPPING = threading.Event()  # set when this process's replication tasks must stop at once
HEARTBEAT_STOP = threading.Event()  # set in the main process at shutdown: the heartbeat thread ends
log = logging.getLogger(__name__)


@worker_ready.connect
def register_worker(sender: Any = None, **_: Any) -> None:
    """Advertise the worker's slots, then keep advertising them (and how many are used) with a heartbeat."""
    slots = worker_slots(settings.MIRRORPLANE_WORKER_SLOTS, _concurrency(sender))
    Worker.objects.update_or_create(name=sender.hostname, defaults={"stopping": False, "slots": slots, "used": 0})
    heart = threading.Thread(
        target=capacity.heartbeat_loop, args=(sender.hostname, HEARTBEAT_STOP), name="heartbeat", daemon=True
    )
    heart.start()


def worker_slots(configured: int, concurrency: int | None) -> int:
    """Slots a worker can honour: each task holds a pool process, and one process at least must stay free for
    provisioning and the periodic jobs, or no flow could ever be provisioned again."""
    if concurrency is None or configured < concurrency:
        return configured
    slots = max(1, concurrency - 1)
    log.warning("MIRRORPLANE_WORKER_SLOTS=%d with a pool of %d: advertising %d slots", configured, concurrency, slots)
    return slots


def _concurrency(consumer: Any) -> int | None:
    value = getattr(getattr(consumer, "controller", None), "concurrency", None)
    return value if isinstance(value, int) and value > 0 else None


@worker_shutting_down.connect
def mark_stopping(sender: Any = None, **_: Any) -> None:
    """Warm shutdown: running replication tasks see the flag at their next lease renewal and stop cleanly. On the
    threads pool they run in this process, so STOPPING stops them at once, as SIGTERM does a prefork pool's."""
    HEARTBEAT_STOP.set()
    STOPPING.set()
    with contextlib.suppress(Exception):
        Worker.objects.filter(name=str(sender)).update(stopping=True)


@worker_process_init.connect
def die_with_worker(**_: Any) -> None:
    """A SIGKILLed worker must not leave pool processes replicating on: its leases then expire and move."""
    die_with_parent(signal.SIGKILL)
    signal.signal(signal.SIGTERM, lambda *_: STOPPING.set())


@beat_init.connect
def start_controller(**_: Any) -> None:
    """Beat hosts the controller: a thread of its own ticks, so no tick waits behind the workers' jobs
    (``services/controllerloop.py``)."""
    controllerloop.start(settings.MIRRORPLANE_CONTROLLER_INTERVAL_SECONDS, settings.STATE_DIR / "controller.lock")
