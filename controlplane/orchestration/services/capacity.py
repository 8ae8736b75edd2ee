"""Capacity: the slots live workers advertise, how many are free, and why a task cannot be placed.

A worker runs at most `slots` replication tasks (each holds a pool process for as long as it runs). It advertises
its slots and how many are in use with a heartbeat every third of a lease; one that has not beaten for a whole
lease period, or is shutting down, counts as gone. The controller places a task only when a live worker has a free
slot. A slot is in use while a task holds a live lease on that worker, and a task dispatched but not yet leased
reserves one (it is on its way to some worker). A task that finds no room is marked with the reason instead of being
dispatched into a queue no worker will take it from.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import close_old_connections, connection
from django.db.models import Count, Q
from django.utils import timezone

from controlplane.orchestration.models import TaskAssignment, Worker
from controlplane.orchestration.services import leases

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WorkerCapacity:
    """One live worker's advertised slots and the slots its live leases take."""

    name: str
    slots: int
    used: int

    @property
    def free(self) -> int:
        return max(0, self.slots - self.used)


@dataclass
class Capacity:
    """Free slots over the live workers for one controller pass; `place` takes slots as tasks are dispatched."""

    workers: tuple[WorkerCapacity, ...]
    reserved: int = 0  # dispatched, not leased yet: each will take a slot somewhere
    taken: int = field(default=0)  # placed during this pass

    @property
    def slots(self) -> int:
        return sum(w.slots for w in self.workers)

    @property
    def used(self) -> int:
        return sum(min(w.used, w.slots) for w in self.workers)

    @property
    def free(self) -> int:
        return max(0, sum(w.free for w in self.workers) - self.reserved - self.taken)

    def place(self, needed: int) -> tuple[int, str]:
        """Take up to `needed` slots: how many were placed and, when not all, why the others were not."""
        free = self.free
        placed = min(needed, free)
        self.taken += placed
        return placed, "" if placed == needed else unplaced_reason(needed, free, self)


def unplaced_reason(needed: int, free: int, capacity: Capacity) -> str:
    """E.g. "needs 2 slots, 0 free on 1 worker (3 slots: 3 running, 0 starting)"."""
    workers = len(capacity.workers)
    head = f"needs {_count(needed, 'slot')}, {free} free on {_count(workers, 'worker')}"
    if not workers:
        return f"{head} (no worker has sent a heartbeat in the last {leases.lease_seconds():g} s)"
    starting = capacity.reserved + capacity.taken
    return f"{head} ({_count(capacity.slots, 'slot')}: {capacity.used} running, {starting} starting)"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def live_since(now: datetime) -> datetime:
    """Workers seen after this are live: they beat every third of a lease."""
    return now - timedelta(seconds=leases.lease_seconds())


def current(now: datetime | None = None) -> Capacity:
    """The live workers' capacity now, from their heartbeats and the leases in the database."""
    now = now or timezone.now()
    workers = Worker.objects.filter(stopping=False, last_seen_at__gt=live_since(now)).order_by("name")
    used = dict(
        TaskAssignment.objects.filter(worker__in=workers, lease_expires_at__gt=now)
        .values("worker_id")
        .annotate(n=Count("id"))
        .values_list("worker_id", "n")
    )
    no_lease = Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lte=now)
    window = now - timedelta(seconds=leases.lease_seconds())
    reserved = TaskAssignment.objects.filter(no_lease, dispatched_at__gt=window).count()
    return Capacity(tuple(WorkerCapacity(w.name, w.slots, used.get(w.pk, 0)) for w in workers), reserved)


def used_slots(worker: Worker, now: datetime | None = None) -> int:
    """Slots the worker's live leases take (an expired lease left by a SIGKILLed run takes none)."""
    return TaskAssignment.objects.filter(worker=worker, lease_expires_at__gt=now or timezone.now()).count()


def heartbeat(name: str) -> None:
    """Advertise that the worker is alive, and how many of its slots are in use."""
    now = timezone.now()
    worker = Worker.objects.filter(name=name).first()
    if worker is not None:
        Worker.objects.filter(pk=worker.pk).update(last_seen_at=now, used=used_slots(worker, now))


def heartbeat_loop(name: str, stopping: threading.Event) -> None:
    """The worker's heartbeat thread (main process): beat every third of a lease until the worker stops."""
    while not stopping.wait(leases.lease_seconds() / 3):
        try:
            close_old_connections()
            heartbeat(name)
        except Exception:  # a database hiccup must not end the heartbeat; the next beat may work
            log.warning("worker %s: heartbeat failed", name, exc_info=True)
        finally:
            # Pool processes may be forked from this process: never leave them a connection they could share.
            connection.close()
