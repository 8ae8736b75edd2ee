"""Leases: one holder at a time, fenced by an epoch, taken over only after expiry."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from controlplane.orchestration.choices import TaskState
from controlplane.orchestration.models import TaskAssignment, Worker
from controlplane.orchestration.services import leases
from tests.controlplane.orchestration.factories import flow

pytestmark = pytest.mark.django_db
CLUSTERS = {"a": "127.0.0.1:1", "b": "127.0.0.1:2"}


def _assignment() -> TaskAssignment:
    return TaskAssignment.objects.create(flow=flow(CLUSTERS, "a", "b", "t"), task_id=0, partitions=[["t", 0]])


def test_only_one_worker_holds_a_lease() -> None:
    assignment = _assignment()
    one, two = Worker.objects.create(name="w1"), Worker.objects.create(name="w2")
    lease = leases.acquire(assignment.pk, one)
    assert lease is not None and lease.epoch == 1
    assert leases.acquire(assignment.pk, two) is None
    assert leases.renew(lease)
    assignment.refresh_from_db()
    assert assignment.worker == one and assignment.state == TaskState.RUNNING


def test_an_expired_lease_moves_and_fences_the_old_holder() -> None:
    assignment = _assignment()
    one, two = Worker.objects.create(name="w1"), Worker.objects.create(name="w2")
    old = leases.acquire(assignment.pk, one)
    assert old is not None
    TaskAssignment.objects.filter(pk=assignment.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    new = leases.acquire(assignment.pk, two)
    assert new is not None and new.epoch == old.epoch + 1
    assert not leases.renew(old), "the fenced holder must learn it lost the lease"
    leases.release(old, TaskState.STOPPED)  # a late release from the old holder changes nothing
    assignment.refresh_from_db()
    assert assignment.worker == two and assignment.state == TaskState.RUNNING
    leases.release(new, TaskState.STOPPED)
    assignment.refresh_from_db()
    assert assignment.worker is None and assignment.lease_expires_at is None
