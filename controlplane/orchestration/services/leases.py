"""Leases with fencing epochs: a task runs only where a conditional UPDATE says so, never in two places."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import timedelta
from types import TracebackType

from django.conf import settings
from django.db import connection
from django.db.models import F, Q
from django.utils import timezone

from controlplane.orchestration.choices import TaskState
from controlplane.orchestration.models import TaskAssignment, Worker


def lease_seconds() -> float:
    return float(settings.MIRRORPLANE_LEASE_SECONDS)


@dataclass(frozen=True)
class Lease:
    """Proof that `worker` runs assignment `assignment_id` as long as `epoch` is current."""

    assignment_id: int
    worker_id: int
    epoch: int


def acquire(assignment_id: int, worker: Worker) -> Lease | None:
    """Take the assignment if nobody holds a live lease on it; bump the epoch so any old holder is fenced."""
    now = timezone.now()
    free = Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lt=now)
    taken = TaskAssignment.objects.filter(free, pk=assignment_id).update(
        worker=worker,
        epoch=F("epoch") + 1,
        lease_expires_at=now + timedelta(seconds=lease_seconds()),
        state=TaskState.RUNNING,
        release_requested=False,
        last_error="",
        failure="",
        unplaced_reason="",
    )
    if not taken:
        return None
    epoch = TaskAssignment.objects.values_list("epoch", flat=True).get(pk=assignment_id)
    return Lease(assignment_id, worker.pk, epoch)


def renew(lease: Lease, **fields: object) -> bool:
    """Extend the lease (and store reported fields) only if it is still ours; False means stop now."""
    now = timezone.now()
    renewed = TaskAssignment.objects.filter(
        pk=lease.assignment_id, worker_id=lease.worker_id, epoch=lease.epoch, lease_expires_at__gt=now
    ).update(lease_expires_at=now + timedelta(seconds=lease_seconds()), **fields)
    Worker.objects.filter(pk=lease.worker_id).update(last_seen_at=now)
    return bool(renewed)


def release(lease: Lease, state: str, error: str = "", failure: str = "") -> None:
    """Give the assignment back (clean stop, pause or failure: `failure` is a TaskFailure), if we still hold it."""
    TaskAssignment.objects.filter(pk=lease.assignment_id, epoch=lease.epoch, worker_id=lease.worker_id).update(
        lease_expires_at=None, worker=None, state=state, last_error=error[:4000], failure=failure, dispatched_at=None
    )


def holds_live_lease(assignment: TaskAssignment) -> bool:
    return assignment.lease_expires_at is not None and assignment.lease_expires_at > timezone.now()


class Kept:
    """Renews a lease from a thread of its own while the task is in a call that its loop cannot interrupt: a start
    that assigns thousands of partitions, or a refresh that adds many. Without it such a call outlasts the lease and
    another worker takes the task over. `lost` says the renewal failed (the task was fenced); the caller stops."""

    def __init__(self, lease: Lease) -> None:
        self.lease = lease
        self.lost = False
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._keep, name=f"lease-{lease.assignment_id}", daemon=True)

    def __enter__(self) -> Kept:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._done.set()
        self._thread.join()

    def _keep(self) -> None:
        try:
            while not self._done.wait(lease_seconds() / 3):
                if not renew(self.lease):
                    self.lost = True
                    return
        finally:
            connection.close()  # this thread's own database connection
