"""Leases: one holder at a time, fenced by an epoch, taken over only after expiry."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

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


def _held_by_one_of_two() -> tuple[TaskAssignment, leases.Lease, Worker]:
    """A task whose lease worker w1 holds, and w2, the worker that would take it over."""
    assignment = _assignment()
    one, two = Worker.objects.create(name="w1"), Worker.objects.create(name="w2")
    lease = leases.acquire(assignment.pk, one)
    assert lease is not None
    return assignment, lease, two


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


@pytest.mark.django_db(transaction=True)  # the keeper's thread writes through a connection of its own
def test_a_call_that_outlasts_the_lease_keeps_it_when_kept(settings: Any) -> None:
    # A start that assigns 750 partitions took 33 s against a 15 s lease: unkept, another worker would take over.
    settings.MIRRORPLANE_LEASE_SECONDS = 0.6
    assignment, lease, two = _held_by_one_of_two()
    with leases.Kept(lease) as kept:
        deadline = time.monotonic() + 2.0  # the long call: more than three lease periods
        while time.monotonic() < deadline:
            assert leases.acquire(assignment.pk, two) is None, "another worker took the task during the call"
            time.sleep(0.05)
    assert not kept.lost and leases.renew(lease)


@pytest.mark.django_db(transaction=True)
def test_a_keeper_that_finds_the_task_fenced_says_so(settings: Any) -> None:
    settings.MIRRORPLANE_LEASE_SECONDS = 0.6
    assignment, lease, two = _held_by_one_of_two()
    with leases.Kept(lease) as kept:
        TaskAssignment.objects.filter(pk=assignment.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
        assert leases.acquire(assignment.pk, two) is not None  # fenced: the epoch moved on
        wait = time.monotonic() + 5
        while not kept.lost and time.monotonic() < wait:
            time.sleep(0.05)
    assert kept.lost


def test_a_renewal_reads_back_what_steers_the_task_not_its_own_report(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every renew_every seconds a task of 2,500 partitions wrote its status and reported list; reading both back
    (hundreds of KB of JSON) cost the idle worker more than the renewal itself."""
    from types import SimpleNamespace

    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from controlplane.orchestration.services import runner
    from controlplane.orchestration.services.taskreports import Reporter
    from replication.metrics.registry import MetricsRegistry

    monkeypatch.setattr(runner, "close_old_connections", lambda: None)  # the test's transaction holds the connection
    assignment = _assignment()
    obj = assignment.flow
    lease = leases.acquire(assignment.pk, Worker.objects.create(name="w1"))
    assert lease is not None
    now = [0.0]
    registry = MetricsRegistry(clock=lambda: now[0])
    registry.record_batch(obj.name, "t", 0, 1, 10, 5.0, 5.0)
    registry.set_position(obj.name, "t", 0, 1)
    task = SimpleNamespace(states={("t", 0): None}, flow=SimpleNamespace(name=obj.name), refresh=lambda: None)
    reporter, seen = Reporter(obj.pk, assignment.pk, obj.name, 0), runner.DesiredPartitions()
    with CaptureQueriesContext(connection) as queries:
        runner._renew_or_stop(assignment, lease, task, registry, reporter, {("t", 0)}, obj.generation, seen)  # type: ignore[arg-type]
    reads = [q["sql"].split(" FROM ")[0] for q in queries.captured_queries if q["sql"].startswith("SELECT")]
    assert reads, "the renewal reads the assignment back"
    assert not [sql for sql in reads if '"orchestration_taskassignment"."status"' in sql], reads
    assert not [sql for sql in reads if '"orchestration_taskassignment"."reported_partitions"' in sql], reads
    assignment.refresh_from_db()
    assert assignment.reported_partitions == [["t", 0]]  # what it wrote is stored all the same

    # Idle since: the registry hands out the same flow snapshot, and the next renewal neither totals it up nor
    # looks at its partitions; it renews the lease and reads the assignment back, nothing more.
    now[0] += 61  # the batch's samples leave the window
    runner._renew_or_stop(assignment, lease, task, registry, reporter, {("t", 0)}, obj.generation, seen)  # type: ignore[arg-type]
    idle = registry.snapshot()["flows"][obj.name]
    with CaptureQueriesContext(connection) as queries:
        runner._renew_or_stop(assignment, lease, task, registry, reporter, {("t", 0)}, obj.generation, seen)  # type: ignore[arg-type]
    assert registry.snapshot()["flows"][obj.name] is idle
    writes = [q["sql"] for q in queries.captured_queries if not q["sql"].startswith("SELECT")]
    assert not [sql for sql in writes if "orchestration_partitionreport" in sql], writes
    assert not [sql for sql in writes if '"status"' in sql], writes


def test_a_renewal_decodes_the_desired_partitions_only_when_the_controller_changed_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from types import SimpleNamespace

    from controlplane.orchestration.services import runner
    from controlplane.orchestration.services.taskreports import Reporter
    from replication.metrics.registry import MetricsRegistry

    monkeypatch.setattr(runner, "close_old_connections", lambda: None)  # the test's transaction holds the connection
    assignment = _assignment()
    obj = assignment.flow
    lease = leases.acquire(assignment.pk, Worker.objects.create(name="w1"))
    assert lease is not None
    registry = MetricsRegistry()
    registry.set_position(obj.name, "t", 0, 1)
    refreshed: list[int] = []
    states = {("t", 0): None}
    task = SimpleNamespace(states=states, flow=SimpleNamespace(name=obj.name), refresh=lambda: refreshed.append(1))
    reporter, owned, seen = Reporter(obj.pk, assignment.pk, obj.name, 0), {("t", 0)}, runner.DesiredPartitions()

    def renew() -> None:
        runner._renew_or_stop(assignment, lease, task, registry, reporter, owned, obj.generation, seen)  # type: ignore[arg-type]

    renew()
    first = seen.partitions
    renew()
    assert seen.partitions is first and not refreshed  # the same stored text: not decoded again
    TaskAssignment.objects.filter(pk=assignment.pk).update(partitions=[["t", 0], ["t", 1]])  # the controller adds one
    renew()
    assert owned == {("t", 0), ("t", 1)} and refreshed == [1] and seen.partitions is not first
    states[("t", 1)] = None  # the refresh assigned it: the next report lists it
    renew()
    assignment.refresh_from_db()
    assert assignment.reported_partitions == [["t", 0], ["t", 1]]
