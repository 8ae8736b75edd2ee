"""Runs one assignment on this worker: a ReplicationTask held under a lease, until told to stop."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable

from django.db import close_old_connections
from django.db.models import F, TextField
from django.db.models.functions import Cast

from controlplane.flows.services import flow_config
from controlplane.orchestration.choices import TaskFailure, TaskState
from controlplane.orchestration.models import TaskAssignment, Worker
from controlplane.orchestration.services import capacity, leases
from controlplane.orchestration.services.taskreports import Reporter
from replication.emitters.periodic import SideEmitters
from replication.metrics.registry import MetricsRegistry
from replication.task.dataloss import DataLossError
from replication.task.replicationtask import ReplicationTask
from replication.task.tuning import tune_gc

log = logging.getLogger(__name__)


class Stop(Exception):
    """The task must stop: lease lost, flow paused, restarted or reassigned, or the worker is shutting down."""


class DesiredPartitions:
    """A running task's desired partitions as the controller last wrote them, read back at each renewal as stored
    text: decoded only when the text changed (2,500 pairs per task of a 10,000-partition flow, every 5 s), and the
    task's report of them built only when it assigned more (a task's partitions only grow while it runs)."""

    def __init__(self) -> None:
        self.text: str | None = None
        self.partitions: set[tuple[str, int]] = set()
        self._reported: list[list[str | int]] = []

    def read(self, text: str) -> set[tuple[str, int]] | None:
        """The desired partitions, or None when the stored text is the one read last (and checked then)."""
        if text == self.text:
            return None
        self.partitions = {(str(t), int(p)) for t, p in json.loads(text)}
        self.text = text
        return self.partitions

    def reported(self, task: ReplicationTask) -> list[list[str | int]]:
        """What the task reports replicating, sorted as the controller stores the desired list."""
        if len(self._reported) != len(task.states):
            self._reported = [[t, p] for t, p in sorted(task.states)]
        return self._reported


def run_assignment(assignment_id: int, worker_name: str, stopping: threading.Event | None = None) -> str:
    """Acquire the lease and replicate until a stop condition; returns how it ended."""
    worker, _ = Worker.objects.get_or_create(name=worker_name)
    if capacity.used_slots(worker) >= worker.slots:
        # The controller counted a free slot that is gone (a race with another dispatch): say so on the task, and
        # hand it back to the controller, which places it again at its next tick.
        reason = f"worker {worker.name} had no free slot ({worker.slots} in use); to be placed again"
        TaskAssignment.objects.filter(pk=assignment_id).update(unplaced_reason=reason, dispatched_at=None)
        log.warning("task %s: %s", assignment_id, reason)
        return "no free slot"
    before = TaskAssignment.objects.select_related("flow").get(pk=assignment_id)
    accept_loss = _restarted_after_data_loss(before)
    lease = leases.acquire(assignment_id, worker)
    if lease is None:
        return "held elsewhere"
    assignment = TaskAssignment.objects.select_related("flow__source", "flow__target").get(pk=assignment_id)
    if not assignment.flow.enabled or assignment.flow.paused:
        leases.release(lease, TaskState.PAUSED)
        return "paused"
    try:
        outcome = _replicate(assignment, lease, stopping or threading.Event(), accept_loss)
    except Exception as exc:
        log.exception("task %s failed", assignment)
        failure = TaskFailure.DATA_LOSS if isinstance(exc, DataLossError) else TaskFailure.ERROR
        leases.release(lease, TaskState.FAILED, f"{type(exc).__name__}: {exc}", failure)
        return "failed"
    leases.release(lease, TaskState.PAUSED if outcome == "paused" else TaskState.STOPPED)
    return outcome


def _restarted_after_data_loss(assignment: TaskAssignment) -> bool:
    """A restart after a reported data loss is the operator's acceptance of it: resume at the log start."""
    return (
        assignment.state == TaskState.FAILED
        and assignment.failure == TaskFailure.DATA_LOSS
        and assignment.generation != assignment.flow.generation
    )


def _replicate(assignment: TaskAssignment, lease: leases.Lease, stopping: threading.Event, accept_loss: bool) -> str:
    owned = {(str(t), int(p)) for t, p in assignment.partitions}
    generation = assignment.flow.generation
    # Reported at once, before the start: the controller hands a partition to another task only when no live task
    # lists it, and this one runs them from now on (its renewals report what it has assigned).
    reported = [[t, p] for t, p in sorted(owned)]
    TaskAssignment.objects.filter(pk=assignment.pk, epoch=lease.epoch).update(
        generation=generation, reported_partitions=reported
    )
    registry = MetricsRegistry()
    config = flow_config(assignment.flow)
    if accept_loss:
        config = config.replace(on_data_loss="continue")
    task = ReplicationTask(
        config,
        task_id=assignment.task_id,
        owns=lambda t, p: (t, p) in owned,
        metrics=registry,
        sync_configs=False,
        provisioned=True,  # the controller dispatches a flow's tasks only after its topics were provisioned
    )
    renew_every = leases.lease_seconds() / 3
    reporter = Reporter(assignment.flow_id, assignment.pk, task.flow.name, assignment.task_id)
    reporter.forget_others(owned)
    # Task 0 also runs the flow's heartbeats, checkpoints and group offset sync, as the standalone runner does.
    side = SideEmitters(config, stopping).start() if assignment.task_id == 0 else None
    desired = DesiredPartitions()
    try:
        _kept(lease, task.start)
        tune_gc()  # this pool process now does nothing but replicate
        next_renew = 0.0
        while not stopping.is_set():
            task.run_once()
            if time.monotonic() >= next_renew:
                _renew_or_stop(assignment, lease, task, registry, reporter, owned, generation, desired)
                next_renew = time.monotonic() + renew_every
    except Stop as stop:
        return str(stop)
    finally:
        if side is not None:
            side.stop()
        task.close()
    return "stopped"


def _renew_or_stop(
    assignment: TaskAssignment,
    lease: leases.Lease,
    task: ReplicationTask,
    registry: MetricsRegistry,
    reporter: Reporter,
    owned: set[tuple[str, int]],
    generation: int,
    seen: DesiredPartitions,
) -> None:
    close_old_connections()
    metrics = registry.snapshot()["flows"][task.flow.name]  # the task's own registry: its flow from the start
    if not leases.renew(lease, **reporter.assignment_fields(metrics, seen.reported(task))):
        raise Stop("lease lost")
    reporter.write_partitions(metrics)  # after the renewal: a fenced task writes none
    # Not the task's own report back (its status and reported list): only what tells it to stop or move on.
    rows = TaskAssignment.objects.select_related("flow", "worker").defer("status", "reported_partitions", "partitions")
    current = rows.annotate(partitions_text=Cast(F("partitions"), TextField())).get(pk=assignment.pk)
    flow = current.flow
    if not flow.enabled or flow.paused:
        raise Stop("paused")
    if flow.generation != generation or current.release_requested:
        raise Stop("restart")
    if current.worker is not None and current.worker.stopping:
        raise Stop("worker stopping")
    desired = seen.read(current.partitions_text)
    if desired is None:
        return  # as at the last renewal, which compared them (owned changes only here)
    if not desired >= owned:
        raise Stop("reassigned")  # partitions moved away: stop cleanly; the controller dispatches again
    if desired != owned:
        owned.update(desired)
        # Listed before they are written: the report above was taken without them, and the controller hands a
        # partition over only when no live task lists it.
        if not leases.renew(lease, reported_partitions=[[t, p] for t, p in sorted(owned)]):
            raise Stop("lease lost")
        _kept(lease, task.refresh)


def _kept(lease: leases.Lease, call: Callable[[], None]) -> None:
    """Run a call that can outlast the lease (start, refresh) with the lease renewed meanwhile."""
    with leases.Kept(lease) as kept:
        call()
    if kept.lost:
        raise Stop("lease lost")
