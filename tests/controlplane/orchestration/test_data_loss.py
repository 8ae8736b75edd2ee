"""A task that stopped on the data plane's DataLossError is marked so (TaskFailure.DATA_LOSS) and stays stopped until
an operator restarts the flow, which accepts the loss; any other failure is retried. Decided on the typed state,
never on the error text."""

from __future__ import annotations

import importlib
from datetime import timedelta
from typing import Any

import pytest
from django.apps import apps
from django.utils import timezone

from controlplane.flows import services as flow_services
from controlplane.flows.models import Flow
from controlplane.orchestration.choices import TaskFailure, TaskState
from controlplane.orchestration.models import TaskAssignment
from controlplane.orchestration.services import controller, runner
from controlplane.orchestration.services.status import flow_status
from replication.task.dataloss import DataLossError
from tests.controlplane.orchestration.factories import flow, live_worker

pytestmark = pytest.mark.django_db
CLUSTERS = {"a": "127.0.0.1:1", "b": "127.0.0.1:2"}


def _fail_with(monkeypatch: pytest.MonkeyPatch, error: Exception) -> list[bool]:
    """Every run of the task records the generation it runs, as the real one does, then raises `error`; returns the
    accept_loss argument of each run."""
    accepted: list[bool] = []

    def replicate(assignment: TaskAssignment, lease: Any, stopping: Any, accept_loss: bool) -> str:
        TaskAssignment.objects.filter(pk=assignment.pk).update(generation=assignment.flow.generation)
        accepted.append(accept_loss)
        raise error

    monkeypatch.setattr(runner, "_replicate", replicate)
    return accepted


def _failed_task(monkeypatch: pytest.MonkeyPatch, error: Exception) -> tuple[TaskAssignment, list[bool]]:
    obj = flow(CLUSTERS, "a", "b", "orders")
    assignment = TaskAssignment.objects.create(flow=obj, task_id=0, partitions=[["orders", 0]])
    live_worker("w-loss", slots=4)
    accepted = _fail_with(monkeypatch, error)
    assert runner.run_assignment(assignment.pk, "w-loss") == "failed"
    return TaskAssignment.objects.select_related("flow").get(pk=assignment.pk), accepted


def _long_ago(assignment: TaskAssignment, **fields: Any) -> TaskAssignment:
    """As if it failed an hour ago: long past the retry delay."""
    TaskAssignment.objects.filter(pk=assignment.pk).update(updated_at=timezone.now() - timedelta(hours=1), **fields)
    return TaskAssignment.objects.select_related("flow").get(pk=assignment.pk)


def test_a_task_stopped_by_data_loss_stays_stopped_until_the_flow_is_restarted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assignment, accepted = _failed_task(monkeypatch, DataLossError("orders", 0, 12, "retention deleted them", 40))
    assert (assignment.state, assignment.failure) == (TaskState.FAILED, TaskFailure.DATA_LOSS)
    assert assignment.last_error == "DataLossError: orders-0: 12 records lost: retention deleted them"
    assert flow_status(assignment.flow).tasks[0].failure == "DATA_LOSS"
    # The text is for people: without it the task is still held back, however long ago it failed.
    assignment = _long_ago(assignment, last_error="")
    assert not controller._may_dispatch(assignment, timezone.now())
    flow_services.restart(assignment.flow)
    assignment = TaskAssignment.objects.select_related("flow").get(pk=assignment.pk)
    assert controller._may_dispatch(assignment, timezone.now())
    assert runner.run_assignment(assignment.pk, "w-loss") == "failed"
    assert accepted == [False, True], "the run after the restart resumes at the log start (accepts the loss)"


def test_any_other_failure_is_retried_whatever_its_text_says(monkeypatch: pytest.MonkeyPatch) -> None:
    assignment, accepted = _failed_task(monkeypatch, RuntimeError("the upstream DataLossError check timed out"))
    assert (assignment.state, assignment.failure) == (TaskState.FAILED, TaskFailure.ERROR)
    assert not controller._may_dispatch(assignment, timezone.now()), "not before the retry delay"
    assert controller._may_dispatch(_long_ago(assignment), timezone.now())
    Flow.objects.filter(pk=assignment.flow_id).update(generation=assignment.flow.generation + 1)
    assert runner.run_assignment(assignment.pk, "w-loss") == "failed"
    assert accepted == [False, False], "a restart after an ordinary failure accepts no loss"


def test_a_new_run_clears_the_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    assignment, _ = _failed_task(monkeypatch, DataLossError("orders", 0, 1, "recreated", 0))
    monkeypatch.setattr(runner, "_replicate", lambda *args: "stopped")
    assert runner.run_assignment(assignment.pk, "w-loss") == "stopped"
    assignment.refresh_from_db()
    assert (assignment.state, assignment.failure, assignment.last_error) == (TaskState.STOPPED, "", "")


def test_the_migration_marks_tasks_that_failed_before_the_field_existed() -> None:
    migration = importlib.import_module("controlplane.orchestration.migrations.0004_assignment_failure_kind")
    obj = flow(CLUSTERS, "a", "b", "orders")
    rows = {
        0: (TaskState.FAILED, "DataLossError: orders-0: 3 records lost: retention"),
        1: (TaskState.FAILED, "KafkaException: _TRANSPORT"),
        2: (TaskState.STOPPED, ""),
    }
    for task_id, (state, error) in rows.items():
        TaskAssignment.objects.create(flow=obj, task_id=task_id, state=state, last_error=error)
    migration.classify_failed_tasks(apps, None)
    failures = dict(TaskAssignment.objects.filter(flow=obj).values_list("task_id", "failure"))
    assert failures == {0: "DATA_LOSS", 1: "ERROR", 2: ""}
