"""The controller's tick stays cheap at scale: it never loads the tasks' status documents (hundreds of KB each)."""

from __future__ import annotations

import fcntl
import itertools
import threading
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from controlplane.flows.models import Flow
from controlplane.orchestration.models import FlowPlan, TaskAssignment, Worker
from controlplane.orchestration.services import controller, leases
from tests.controlplane.orchestration.factories import flow, live_worker

CLUSTERS = {"a": "127.0.0.1:1", "b": "127.0.0.1:2"}


@pytest.mark.django_db
@pytest.mark.parametrize("paused", [False, True])
def test_a_tick_reads_no_task_status(monkeypatch: Any, paused: bool) -> None:
    live_worker("w1", slots=1)
    obj = flow(CLUSTERS, "a", "b", "t", tasks_max=2)
    obj.paused = paused
    obj.save()
    FlowPlan.objects.create(flow=obj, provisioned_at=timezone.now())
    big = {"partitions": [{"topic": "t", "partition": n, "lag": n} for n in range(2000)]}
    for task_id in range(2):
        TaskAssignment.objects.create(flow=obj, task_id=task_id, partitions=[["t", task_id]], status=big)
    monkeypatch.setattr(controller, "_source_partitions", lambda flow, plan_row, listings=None: [("t", 0), ("t", 1)])
    with CaptureQueriesContext(connection) as queries:
        controller.tick()
    reads = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("SELECT")]
    task_reads = [sql for sql in reads if '"orchestration_taskassignment"' in sql.split(" FROM ")[-1]]
    assert task_reads, "the tick reads the assignments"
    assert not [sql for sql in task_reads if '"orchestration_taskassignment"."status"' in sql]
    if not paused:
        assert TaskAssignment.objects.exclude(dispatched_at=None).count() == 1  # one slot: one task dispatched


@pytest.mark.django_db
def test_ticks_never_overlap_on_one_host(tmp_path: Path, monkeypatch: Any) -> None:
    calls: list[int] = []
    monkeypatch.setattr(controller, "tick", lambda listings=None: calls.append(1) or [7])
    lock = tmp_path / "controller.lock"
    with lock.open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # a previous tick, still waiting on a cluster
        assert controller.tick_alone(lock) is None
        fcntl.flock(held, fcntl.LOCK_UN)
    assert calls == []
    assert controller.tick_alone(lock) == [7]
    assert controller.tick_alone(lock) == [7]  # released after each tick
    assert calls == [1, 1]


@pytest.mark.django_db
def test_a_source_that_cannot_be_listed_keeps_its_partitions_and_is_asked_again_only_after_the_retry_delay(
    monkeypatch: Any,
) -> None:
    obj = flow(CLUSTERS, "a", "b", "t", tasks_max=1)
    plan_row = FlowPlan.objects.create(flow=obj, partitions=[["t", 0], ["t", 1]], refreshed_at=None)
    asked: list[float] = []

    class Source:
        answer: dict[str, int] | None = None

        def __init__(self, *clients: Any) -> None:
            pass

        def source_topics(self, timeout: float) -> dict[str, int]:
            asked.append(timeout)
            if Source.answer is None:
                raise KafkaException(KafkaError(KafkaError._TRANSPORT, "source down"))
            return Source.answer

    monkeypatch.setattr(controller, "TopicSync", Source)
    assert controller._source_partitions(obj, plan_row) is None  # not listed: the plan row's partitions stay
    assert asked == [controller.LIST_TIMEOUT]
    plan_row.refresh_from_db()
    assert plan_row.partitions == [["t", 0], ["t", 1]]
    assert plan_row.last_error.startswith("listing source topics:") and "source down" in plan_row.last_error
    assert controller._source_partitions(obj, plan_row) is None
    assert len(asked) == 1  # not asked again within the retry delay
    FlowPlan.objects.filter(pk=plan_row.pk).update(list_failed_at=timezone.now() - timedelta(minutes=5))
    plan_row.refresh_from_db()
    Source.answer = {"t": 3}
    assert controller._source_partitions(obj, plan_row) == [("t", 0), ("t", 1), ("t", 2)]
    plan_row.refresh_from_db()
    assert (plan_row.last_error, plan_row.list_failed_at) == ("", None)


@pytest.mark.django_db
def test_a_tick_plans_again_only_when_the_partitions_or_tasks_max_changed(monkeypatch: Any) -> None:
    """Planning 10,000 partitions every 2 s tick was most of an idle worker's CPU: the same listing is not replanned,
    and the tick reads no task's partitions (a task with none is still told apart: it needs no runner)."""
    live_worker("w1", slots=4)
    obj = flow(CLUSTERS, "a", "b", "t", tasks_max=3)
    FlowPlan.objects.create(flow=obj, provisioned_at=timezone.now())
    listed = [("t", 0), ("t", 1)]
    monkeypatch.setattr(controller, "_source_partitions", lambda flow, plan_row, listings=None: list(listed))
    plans: list[int] = []
    real_plan = controller._plan
    monkeypatch.setattr(controller, "_plan", lambda *args: plans.append(1) or real_plan(*args))

    controller.tick()
    assert len(plans) == 1
    placed = dict(TaskAssignment.objects.filter(flow=obj).values_list("task_id", "partitions"))
    assert sorted(p for ps in placed.values() for p in ps) == [["t", 0], ["t", 1]]
    dispatched = set(TaskAssignment.objects.exclude(dispatched_at=None).values_list("task_id", flat=True))
    assert dispatched == {t for t, ps in placed.items() if ps} | {0}  # the task without partitions waits
    with CaptureQueriesContext(connection) as queries:
        controller.tick()
    assert len(plans) == 1, "the same listing was planned again"
    task_reads = [q["sql"] for q in queries.captured_queries if '"orchestration_taskassignment"' in q["sql"]]
    assert not [sql for sql in task_reads if '"orchestration_taskassignment"."partitions",' in sql.split(" FROM ")[0]]

    listed.append(("t", 2))
    controller.tick()
    assert len(plans) == 2
    assert sorted(p for a in TaskAssignment.objects.filter(flow=obj) for p in a.partitions) == [
        [t, p] for t, p in listed
    ]
    obj.tasks_max = 2
    obj.save()
    controller.tick()
    assert len(plans) == 3 and TaskAssignment.objects.filter(flow=obj).count() == 2
    TaskAssignment.objects.filter(flow=obj, task_id=1).delete()  # not the controller's doing
    controller.tick()
    assert len(plans) == 4 and sorted(TaskAssignment.objects.filter(flow=obj).values_list("task_id", flat=True)) == [
        0,
        1,
    ]


@pytest.mark.django_db
def test_a_tick_with_an_unchanged_flow_does_not_decode_its_listed_partitions(monkeypatch: Any) -> None:
    """At 10,000 partitions each 2 s tick decoded the 140 KB listing to compare it with the last plan; the listing's
    digest, written with it, says the same. A new listing with a change is still planned."""
    live_worker("w1", slots=4)
    obj = flow(CLUSTERS, "a", "b", "t", tasks_max=2)
    FlowPlan.objects.create(flow=obj, provisioned_at=timezone.now())
    listings: list[dict[str, int]] = []

    class Source:
        def __init__(self, *clients: Any) -> None:
            pass

        def source_topics(self, timeout: float) -> dict[str, int]:
            listings.append({"t": 3})
            return listings[-1]

    monkeypatch.setattr(controller, "TopicSync", Source)
    controller.tick()
    assert len(listings) == 1
    assert sorted(p for a in TaskAssignment.objects.filter(flow=obj) for p in a.partitions) == [
        ["t", n] for n in range(3)
    ]
    with CaptureQueriesContext(connection) as queries:
        controller.tick()
    assert len(listings) == 1  # not due again within refresh.topics.interval.seconds
    columns = [q["sql"].split(" FROM ")[0] for q in queries.captured_queries if q["sql"].startswith("SELECT")]
    assert not [sql for sql in columns if '"orchestration_flowplan"."partitions"' in sql]
    # Nor the tasks' reported partitions (as many as they replicate), which the dispatch does not need either.
    assert not [sql for sql in columns if '"orchestration_taskassignment"."reported_partitions"' in sql]

    FlowPlan.objects.filter(flow=obj).update(refreshed_at=timezone.now() - timedelta(days=1))
    Source.source_topics = lambda self, timeout: listings.append({"t": 4}) or listings[-1]  # type: ignore[method-assign]
    controller.tick()
    assert len(listings) == 2
    assert sorted(p for a in TaskAssignment.objects.filter(flow=obj) for p in a.partitions) == [
        ["t", n] for n in range(4)
    ]


def _planned_flow(monkeypatch: Any, tasks_max: int) -> tuple[Worker, Flow]:
    """A live worker, and a provisioned flow of source partitions t-0 and t-1 that one tick has planned."""
    worker = live_worker("w1", slots=4)
    obj = flow(CLUSTERS, "a", "b", "t", tasks_max=tasks_max)
    FlowPlan.objects.create(flow=obj, provisioned_at=timezone.now())
    monkeypatch.setattr(controller, "_source_partitions", lambda flow, plan_row, listings=None: [("t", 0), ("t", 1)])
    controller.reconcile(obj)
    return worker, obj


@pytest.mark.django_db
def test_a_moved_partition_reaches_its_new_task_only_after_its_last_owner_let_it_go(monkeypatch: Any) -> None:
    """tasks.max 1 -> 2 moves a partition from a running task 0 to task 1. Handed over at once, both tasks wrote it
    until task 0's next renewal (the demo's tasks.max 3 -> 2 duplicated a moved partition's records)."""
    worker, obj = _planned_flow(monkeypatch, tasks_max=1)
    zero = TaskAssignment.objects.get(flow=obj, task_id=0)
    assert zero.partitions == [["t", 0], ["t", 1]]
    lease = leases.acquire(zero.pk, worker)
    assert lease is not None and leases.renew(lease, reported_partitions=[["t", 0], ["t", 1]])

    obj.tasks_max = 2
    obj.save()
    controller.reconcile(obj)
    rows = {a.task_id: a.partitions for a in TaskAssignment.objects.filter(flow=obj)}
    assert rows == {0: [["t", 0]], 1: []}, "task 0 still runs t-1: not yet handed over"
    controller.reconcile(obj)  # the next tick, task 0 still running it: still not
    assert TaskAssignment.objects.get(flow=obj, task_id=1).partitions == []

    leases.release(lease, "STOPPED")  # task 0's renewal saw t-1 gone: it stops cleanly (and is dispatched again)
    controller.reconcile(obj)
    rows = {a.task_id: a.partitions for a in TaskAssignment.objects.filter(flow=obj)}
    assert rows == {0: [["t", 0]], 1: [["t", 1]]}
    assert FlowPlan.objects.get(flow=obj).planned_signature, "handed over: the tick stops planning again"


@pytest.mark.django_db
def test_a_task_beyond_a_lowered_tasks_max_is_emptied_and_deleted_once_its_runner_stopped(monkeypatch: Any) -> None:
    worker, obj = _planned_flow(monkeypatch, tasks_max=2)
    one = TaskAssignment.objects.get(flow=obj, task_id=1)
    assert one.partitions == [["t", 1]]
    lease = leases.acquire(one.pk, worker)
    assert lease is not None

    obj.tasks_max = 1
    obj.save()
    controller.reconcile(obj)
    rows = {a.task_id: a.partitions for a in TaskAssignment.objects.filter(flow=obj)}
    assert rows == {0: [["t", 0]], 1: []}, "task 1's runner still holds t-1"
    leases.release(lease, "STOPPED")
    controller.reconcile(obj)
    rows = {a.task_id: a.partitions for a in TaskAssignment.objects.filter(flow=obj)}
    assert rows == {0: [["t", 0], ["t", 1]]}


@pytest.mark.django_db
def test_with_listings_a_hanging_source_never_holds_the_tick_and_its_result_lands_in_a_later_one(
    monkeypatch: Any,
) -> None:
    """The controller loop lists sources off its thread: a tick submits the listing and returns at once; a later
    tick takes the finished listing. An edit while it runs drops that listing and lists the edited flow again."""
    obj = flow(CLUSTERS, "a", "b", "t", tasks_max=1)
    plan_row = FlowPlan.objects.create(flow=obj, partitions=[["t", 0]], refreshed_at=None)
    release = threading.Event()
    asked: list[float] = []

    class Source:
        def __init__(self, *clients: Any) -> None:
            pass

        def source_topics(self, timeout: float) -> dict[str, int]:
            asked.append(timeout)
            release.wait(30)
            return {"t": 2 + len(asked)}

    monkeypatch.setattr(controller, "TopicSync", Source)
    listings = controller.SourceListings()
    try:
        started = time.monotonic()
        assert controller._source_partitions(obj, plan_row, listings) is None
        assert controller._source_partitions(obj, plan_row, listings) is None  # still listing: not submitted again
        assert time.monotonic() - started < 1.0
        Flow.objects.filter(pk=obj.pk).update(updated_at=timezone.now())  # an edit: that listing is stale
        obj.refresh_from_db()
        assert controller._source_partitions(obj, plan_row, listings) is None
        release.set()
        deadline = time.monotonic() + 10
        while (listed := controller._source_partitions(obj, plan_row, listings)) is None:
            assert time.monotonic() < deadline, "the listing never landed"
            time.sleep(0.05)
        assert listed == [("t", 0), ("t", 1), ("t", 2), ("t", 3)]  # the second listing's answer: {"t": 4}
        assert len(asked) == 2
        plan_row.refresh_from_db()
        assert plan_row.refreshed_at is not None and plan_row.last_error == ""
    finally:
        release.set()
        listings.close()


@pytest.mark.django_db(transaction=True)  # the loop runs in a thread of its own, with its own connection
def test_the_controller_loop_ticks_on_time_and_counts_a_late_tick(monkeypatch: Any, tmp_path: Path) -> None:
    from controlplane.orchestration.models import ControllerRun
    from controlplane.orchestration.services import controllerloop

    durations = iter([0.0, 0.0, 0.5, 0.0, 0.0])  # the third tick outlasts the 0.2 s interval
    ticked: list[float] = []

    def tick(lock: Path, listings: Any) -> list[int]:
        ticked.append(time.monotonic())
        time.sleep(next(durations, 0.0))
        if len(ticked) == 5:
            stop.set()
        return []

    monkeypatch.setattr(controller, "tick_alone", tick)
    stop = threading.Event()
    loop = threading.Thread(target=controllerloop.run, args=(stop, 0.2, tmp_path / "controller.lock"))
    loop.start()
    loop.join(10)
    assert not loop.is_alive()
    run = ControllerRun.objects.get(pk=1)
    assert (run.ticks, run.late_ticks) == (5, 1)
    assert 0.5 <= run.longest_tick_seconds < 1.0
    gaps = [b - a for a, b in itertools.pairwise(ticked)]
    assert [round(g, 1) for g in gaps] == [0.2, 0.2, 0.5, 0.2]
