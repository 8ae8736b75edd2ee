"""Capacity is explicit: workers advertise slots, the controller places tasks only where there is room, and a task
that cannot be placed says why everywhere (status API, health, graph, /metrics)."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.utils import timezone
from rest_framework.test import APIClient

from controlplane.flows.models import Flow
from controlplane.monitoring.choices import Health
from controlplane.monitoring.services import graph
from controlplane.orchestration.models import FlowPlan, TaskAssignment, Worker
from controlplane.orchestration.services import capacity, controller, runner, status
from controlplane.orchestration.services.capacity import Capacity, WorkerCapacity
from controlplane.orchestration.services.dispatch import Dispatch
from controlplane.orchestration.signals import worker_slots
from tests.controlplane.orchestration.factories import flow, live_worker

CLUSTERS = {"a": "127.0.0.1:1", "b": "127.0.0.1:2", "c": "127.0.0.1:3"}


def test_place_takes_free_slots_until_none_are_left_and_names_the_shortfall() -> None:
    room = Capacity((WorkerCapacity("w1", slots=3, used=1),))
    assert room.free == 2
    assert room.place(1) == (1, "")
    placed, reason = room.place(2)
    assert placed == 1
    assert reason == "needs 2 slots, 1 free on 1 worker (3 slots: 1 running, 2 starting)"
    assert room.free == 0
    assert room.place(2) == (0, "needs 2 slots, 0 free on 1 worker (3 slots: 1 running, 2 starting)")


def test_dispatched_tasks_not_yet_leased_reserve_slots_across_workers() -> None:
    room = Capacity((WorkerCapacity("w1", 2, 2), WorkerCapacity("w2", 2, 0)), reserved=1)
    assert (room.slots, room.used, room.free) == (4, 2, 1)
    assert room.place(3) == (1, "needs 3 slots, 1 free on 2 workers (4 slots: 2 running, 2 starting)")


def test_with_no_live_worker_the_reason_says_no_heartbeat() -> None:
    assert Capacity(()).place(1) == (
        0,
        "needs 1 slot, 0 free on 0 workers (no worker has sent a heartbeat in the last 15 s)",
    )


def test_a_worker_never_advertises_more_slots_than_its_pool_can_run_beside_the_controller() -> None:
    assert worker_slots(3, 6) == 3
    assert worker_slots(4, 4) == 3
    assert worker_slots(4, 1) == 1
    assert worker_slots(4, None) == 4


def _provisioned_flow(source: str = "a", target: str = "b", tasks: int = 2) -> Flow:
    obj = flow(CLUSTERS, source, target, "t", tasks_max=tasks)
    FlowPlan.objects.create(flow=obj, provisioned_at=timezone.now())
    for task_id in range(tasks):
        TaskAssignment.objects.create(flow=obj, task_id=task_id, partitions=[["t", task_id]])
    return obj


def _lease(assignment: TaskAssignment, worker: Worker, seconds: float = 15) -> None:
    expires = timezone.now() + timedelta(seconds=seconds)
    TaskAssignment.objects.filter(pk=assignment.pk).update(worker=worker, lease_expires_at=expires, state="RUNNING")


@pytest.mark.django_db
def test_current_counts_live_workers_live_leases_and_tasks_on_their_way() -> None:
    busy, gone = live_worker("busy", slots=3), live_worker("gone", slots=8)
    live_worker("leaving", slots=8)
    Worker.objects.filter(name="gone").update(last_seen_at=timezone.now() - timedelta(minutes=5))
    Worker.objects.filter(name="leaving").update(stopping=True)
    obj = _provisioned_flow(tasks=4)
    tasks = list(TaskAssignment.objects.filter(flow=obj))
    _lease(tasks[0], busy)
    _lease(tasks[1], busy, seconds=-1)  # expired (a SIGKILLed run): takes no slot
    _lease(tasks[2], gone)
    TaskAssignment.objects.filter(pk=tasks[3].pk).update(dispatched_at=timezone.now())
    room = capacity.current()
    assert [w.name for w in room.workers] == ["busy"]
    assert (room.slots, room.used, room.reserved, room.free) == (3, 1, 1, 1)


@pytest.mark.django_db
def test_the_controller_dispatches_as_many_tasks_as_there_are_free_slots_and_marks_the_rest(
    django_capture_on_commit_callbacks: Any,
) -> None:
    live_worker("w1", slots=1)
    obj = _provisioned_flow(tasks=2)
    with django_capture_on_commit_callbacks() as callbacks:
        dispatched = controller._dispatch(obj, capacity.current())
    assert len(dispatched) == 1 and callbacks == [Dispatch("run_assignment", dispatched[0])]
    task0, task1 = TaskAssignment.objects.filter(flow=obj).order_by("task_id")
    assert task0.unplaced_reason == "" and task0.dispatched_at is not None
    assert task1.unplaced_reason == "needs 2 slots, 1 free on 1 worker (1 slot: 0 running, 1 starting)"
    assert task1.dispatched_at is None
    assert controller._dispatch(obj, capacity.current()) == []  # task 0 is on its way: still no room for task 1
    task1.refresh_from_db()
    assert task1.unplaced_reason == "needs 1 slot, 0 free on 1 worker (1 slot: 0 running, 1 starting)"


@pytest.mark.django_db
def test_once_a_slot_frees_up_the_unplaced_task_is_dispatched_and_its_reason_cleared(
    django_capture_on_commit_callbacks: Any,
) -> None:
    worker = live_worker("w1", slots=1)
    other = _provisioned_flow("a", "c", tasks=1)
    _lease(TaskAssignment.objects.get(flow=other), worker)
    obj = _provisioned_flow(tasks=1)
    assert controller._dispatch(obj, capacity.current()) == []
    assert TaskAssignment.objects.get(flow=obj).unplaced_reason.startswith("needs 1 slot, 0 free on 1 worker")
    TaskAssignment.objects.filter(flow=other).update(lease_expires_at=None, worker=None, state="STOPPED")
    with django_capture_on_commit_callbacks():
        assert len(controller._dispatch(obj, capacity.current())) == 1
    assert TaskAssignment.objects.get(flow=obj).unplaced_reason == ""


@pytest.mark.django_db
def test_a_worker_without_a_free_slot_refuses_and_says_so_on_the_task() -> None:
    worker = live_worker("full", slots=1)
    other = _provisioned_flow("a", "c", tasks=1)
    _lease(TaskAssignment.objects.get(flow=other), worker)
    obj = _provisioned_flow(tasks=1)
    task = TaskAssignment.objects.get(flow=obj)
    TaskAssignment.objects.filter(pk=task.pk).update(dispatched_at=timezone.now())
    assert runner.run_assignment(task.pk, "full") == "no free slot"
    task.refresh_from_db()
    assert task.dispatched_at is None and task.lease_expires_at is None
    assert task.unplaced_reason == "worker full had no free slot (1 in use); to be placed again"


@pytest.mark.django_db
def test_a_flow_is_not_dispatched_before_its_topics_are_provisioned(
    django_capture_on_commit_callbacks: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    live_worker("w1", slots=4)
    obj = flow(CLUSTERS, "a", "b", "t", tasks_max=1)
    monkeypatch.setattr(controller, "_source_partitions", lambda flow, plan_row, listings=None: [("t", 0)])
    with django_capture_on_commit_callbacks() as callbacks:
        assert controller.reconcile(obj) == []
    jobs = lambda callbacks: [c for c in callbacks if c.job == "provision_flow"]  # noqa: E731
    assert len(jobs(callbacks)) == 1
    with django_capture_on_commit_callbacks() as again:
        assert controller.reconcile(obj) == []
    assert jobs(again) == [], "one provisioning job at a time (retried after MIRRORPLANE_RETRY_SECONDS)"
    FlowPlan.objects.filter(flow=obj).update(provisioned_at=timezone.now())
    with django_capture_on_commit_callbacks():
        assert len(controller.reconcile(obj)) == 1


def _viewer() -> APIClient:
    user = User.objects.create_user(f"viewer-{uuid.uuid4().hex[:6]}", password="x")
    user.groups.add(Group.objects.get(name="viewer"))
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.mark.django_db
def test_an_unplaceable_task_is_named_with_its_reason_by_the_status_api_health_graph_and_metrics() -> None:
    worker = live_worker("w1", slots=1)
    other = _provisioned_flow("a", "c", tasks=1)
    _lease(TaskAssignment.objects.get(flow=other), worker)
    obj = _provisioned_flow(tasks=2)
    controller._dispatch(obj, capacity.current())
    reason = "needs 2 slots, 0 free on 1 worker (1 slot: 1 running, 0 starting)"

    body = _viewer().get(f"/api/v1/flows/{obj.pk}/status/").json()
    assert [(t["task_id"], t["placement"], t["unplaced_reason"]) for t in body["tasks"]] == [
        (0, "unplaced", reason),
        (1, "unplaced", reason),
    ]
    assert body["unplaced"] == 2 and body["provisioning"]["provisioned"] is True

    edge = next(e for e in graph.dashboard()["edges"] if e["id"] == obj.pk)
    assert edge["health"] == Health.FAILING and edge["unplaced"] == 2
    assert edge["unplaced_reason"] == f"task 0 not placed: {reason}"
    tiles = graph.dashboard()["tiles"]
    assert tiles["unplaced_tasks"] == 2 and tiles["unhealthy"] >= 1
    assert tiles["capacity"] == {"slots": 1, "used": 1, "starting": 0, "free": 0, "workers": 1}

    text = _viewer().get("/metrics").content.decode()
    assert 'mirrorplane_tasks_unplaced{flow="a->b"} 2' in text
    assert 'mirrorplane_tasks_unplaced{flow="a->c"} 0' in text
    assert 'mirrorplane_worker_slots{worker="w1"} 1' in text
    assert 'mirrorplane_worker_slots_used{worker="w1"} 1' in text


@pytest.mark.django_db
def test_a_paused_flow_has_no_unplaced_tasks(monkeypatch: pytest.MonkeyPatch) -> None:
    obj = _provisioned_flow(tasks=1)
    TaskAssignment.objects.filter(flow=obj).update(unplaced_reason="needs 1 slot, 0 free on 0 workers")
    Flow.objects.filter(pk=obj.pk).update(paused=True)
    obj.refresh_from_db()
    monkeypatch.setattr(controller, "_source_partitions", lambda flow, plan_row, listings=None: [("t", 0)])
    controller.reconcile(obj)
    assert TaskAssignment.objects.get(flow=obj).unplaced_reason == ""


@pytest.mark.django_db
def test_the_heartbeat_advertises_slots_in_use_and_keeps_the_worker_live() -> None:
    worker = live_worker("beating", slots=2)
    Worker.objects.filter(pk=worker.pk).update(last_seen_at=timezone.now() - timedelta(minutes=5))
    assert capacity.current().workers == ()
    obj = _provisioned_flow(tasks=1)
    _lease(TaskAssignment.objects.get(flow=obj), worker)
    capacity.heartbeat("beating")
    worker.refresh_from_db()
    assert worker.used == 1
    assert capacity.current().workers == (WorkerCapacity("beating", 2, 1),)


@pytest.mark.django_db
def test_raising_tasks_max_moves_partitions_at_once_and_an_idle_task_says_why(monkeypatch: Any) -> None:
    """The walk-through found task 1 idle for the 120 s rebalance delay after tasks.max 1 -> 2, with no reason shown.
    An operator's tasks.max change is the rebalance asked for; the delay only damps churn from partition changes."""
    partitions = [("t", p) for p in range(4)]
    monkeypatch.setattr(controller, "_source_partitions", lambda flow, plan_row, listings=None: partitions)
    obj = flow(CLUSTERS, "a", "b", "t", tasks_max=1)
    FlowPlan.objects.create(flow=obj, provisioned_at=timezone.now())
    TaskAssignment.objects.create(flow=obj, task_id=0, partitions=[["t", p] for p in range(4)])
    Flow.objects.filter(pk=obj.pk).update(tasks_max=2)
    obj.refresh_from_db()
    controller.reconcile(obj, Capacity(()))
    owned = {a.task_id: sorted(map(tuple, a.partitions)) for a in TaskAssignment.objects.filter(flow=obj)}
    assert owned == {0: [("t", 0), ("t", 1)], 1: [("t", 2), ("t", 3)]}
    assert FlowPlan.objects.get(flow=obj).imbalance_since is None

    Flow.objects.filter(pk=obj.pk).update(tasks_max=5)  # more tasks than partitions: one stays idle, and says so
    obj.refresh_from_db()
    controller.reconcile(obj, Capacity(()))
    idle = [t for t in status.flow_status(obj).tasks if t.placement == "idle"]
    assert [t.idle_reason for t in idle] == ["no partitions: the flow has 4 partitions for 5 tasks"]


@pytest.mark.django_db
def test_a_task_idle_until_the_delayed_rebalance_says_when(monkeypatch: Any) -> None:
    partitions = [("t", p) for p in range(4)]
    monkeypatch.setattr(controller, "_source_partitions", lambda flow, plan_row, listings=None: partitions)
    obj = flow(CLUSTERS, "a", "b", "t", tasks_max=2)
    FlowPlan.objects.create(flow=obj, provisioned_at=timezone.now())
    TaskAssignment.objects.create(flow=obj, task_id=0, partitions=[["t", p] for p in range(4)])
    TaskAssignment.objects.create(flow=obj, task_id=1, partitions=[])  # e.g. its partitions' topic was recreated
    controller.reconcile(obj, Capacity(()))
    body = status.flow_status(obj)
    assert body.rebalance_due_at is not None
    (idle,) = [t for t in body.tasks if t.task_id == 1]
    assert idle.placement == "idle"
    due = f"{body.rebalance_due_at:%H:%M:%S} UTC"
    assert idle.idle_reason == f"no partitions yet: the delayed rebalance gives it some at {due}"
