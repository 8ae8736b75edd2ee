"""The controller plans and dispatches; a runner replicates under its lease, pauses and resumes without loss."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import pytest
from django.db import connection

from controlplane.flows import services as flow_services
from controlplane.orchestration.choices import TaskState
from controlplane.orchestration.models import TaskAssignment
from controlplane.orchestration.services import controller, provisioning, runner
from tests.controlplane.orchestration.factories import flow, live_worker
from tests.support.kafka import consume_to_end, create_topic, end_offsets, unique_topic, wait_until
from tests.support.replication import produce_known

pytestmark = pytest.mark.kafka


@pytest.mark.django_db
def test_the_controller_spreads_partitions_over_tasks_max_and_dispatches_each(
    kafka_clusters: dict[str, str], django_capture_on_commit_callbacks: Any
) -> None:
    topic = unique_topic("plan")
    create_topic(kafka_clusters["us-west"], topic, partitions=5)
    obj = flow(kafka_clusters, "us-west", "us-east", topic, tasks_max=2)
    live_worker("w-spread", slots=4)
    with django_capture_on_commit_callbacks() as first:
        assert controller.reconcile(obj) == [], "no task starts before the flow's topics are provisioned"
    # The provisioning job, and the flow's topic config/ACL sync (not gated: it is idempotent like provisioning)
    assert sorted(c.job for c in first) == ["provision_flow", "sync_topic_configs_and_acls"]
    assert {c.id for c in first} == {obj.pk}
    assert provisioning.provision(obj.pk)
    with django_capture_on_commit_callbacks() as callbacks:
        dispatched = controller.reconcile(obj)
    assignments = {a.task_id: a.partitions for a in TaskAssignment.objects.filter(flow=obj)}
    ours = sorted(tuple(tp) for tps in assignments.values() for tp in tps if tp[0] == topic)
    assert ours == [(topic, p) for p in range(5)]
    # Heartbeat topics always replicate (MM2), so the source's `heartbeats` may add partitions to the plan.
    others = {tp[0] for tps in assignments.values() for tp in tps if tp[0] != topic}
    assert others <= {"heartbeats"}
    sizes = sorted(len(p) for p in assignments.values())
    assert sizes[-1] - sizes[0] <= 1
    assert len(dispatched) == 2
    assert sorted((c.job, c.id) for c in callbacks) == [("run_assignment", pk) for pk in sorted(dispatched)]
    assert controller.reconcile(obj) == [], "no second dispatch while a runner is on its way"


@contextmanager
def _running(assignment_id: int, name: str) -> Iterator[threading.Event]:
    stopping = threading.Event()
    result: list[str] = []

    def target() -> None:
        try:
            result.append(runner.run_assignment(assignment_id, name, stopping))
        finally:
            connection.close()

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    try:
        yield stopping
    finally:
        stopping.set()
        thread.join(60)
        assert not thread.is_alive()


@pytest.mark.django_db(transaction=True)
def test_a_paused_flow_stops_and_resumes_where_it_left_off(kafka_clusters: dict[str, str], settings: Any) -> None:
    settings.MIRRORPLANE_LEASE_SECONDS = 3
    src, dst = kafka_clusters["us-east"], kafka_clusters["backup"]
    topic = unique_topic("pause")
    create_topic(src, topic, partitions=2)
    obj = flow(kafka_clusters, "us-east", "backup", topic)
    controller.reconcile(obj)
    assert provisioning.provision(obj.pk)
    assignment = TaskAssignment.objects.get(flow=obj, task_id=0)
    remote = f"us-east.{topic}"

    def total() -> int:
        try:
            return sum(end_offsets(dst, remote, range(2)).values())
        except Exception:
            return 0

    with _running(assignment.pk, "worker-a"):
        produce_known(src, topic, 2, 1000)
        wait_until(lambda: total() == 1000, timeout=60, what="first 1000 records")
        flow_services.pause(obj)
        wait_until(lambda: TaskAssignment.objects.get(pk=assignment.pk).state == TaskState.PAUSED, timeout=30)
    produce_known(src, topic, 2, 500, start=1000)
    assert total() == 1000, "nothing replicates while paused"
    flow_services.resume(obj)
    with _running(assignment.pk, "worker-b"):
        wait_until(lambda: total() >= 1500, timeout=60, what="the records produced while paused")
    values = [m.value() for m in consume_to_end(dst, remote, 2)]
    assert len(set(values)) == 1500


@pytest.mark.django_db
def test_topic_config_and_acl_sync_runs_as_a_periodic_job_at_the_flow_interval(
    kafka_clusters: dict[str, str], django_capture_on_commit_callbacks: Any
) -> None:
    from confluent_kafka.admin import ConfigResource, ResourceType

    from controlplane.orchestration.models import FlowPlan
    from controlplane.orchestration.services import topicsync
    from tests.support.kafka import admin

    topic = unique_topic("cfgsync")
    create_topic(kafka_clusters["us-west"], topic, partitions=1, config={"retention.ms": "5400000"})
    obj = flow(kafka_clusters, "us-west", "backup", topic, sync_topic_configs_interval_seconds=600)
    with django_capture_on_commit_callbacks() as first:
        controller.reconcile(obj)
    with django_capture_on_commit_callbacks() as second:
        controller.reconcile(obj)
    jobs = lambda callbacks: [c for c in callbacks if c.job == "sync_topic_configs_and_acls"]  # noqa: E731
    assert len(jobs(first)) == 1 and jobs(second) == [], "one sync per interval"
    assert FlowPlan.objects.get(flow=obj).topics_synced_at is not None
    result = topicsync.sync_topic_configs_and_acls(obj)
    assert result["topics"] >= 1  # ours, plus any heartbeat topics (always replicated)
    client = admin(kafka_clusters["backup"])
    resource = ConfigResource(ResourceType.TOPIC, f"us-west.{topic}")
    assert client.describe_configs([resource])[resource].result(timeout=10)["retention.ms"].value == "5400000"


@pytest.mark.django_db(transaction=True)
def test_task_0_runs_with_no_partitions_and_emits_the_flows_heartbeats(
    kafka_clusters: dict[str, str], settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failback flow's source often has no matching topic yet. Its task 0 must still run: it emits the
    heartbeats that create the source's `heartbeats` topic, which the flow then replicates: keyed (target,
    source), as MM2's heartbeat connector of the reverse pair writes them there."""
    from controlplane.monitoring.services.health import health
    from controlplane.orchestration.services.status import flow_status
    from replication.mm2.records import Heartbeat

    settings.MIRRORPLANE_LEASE_SECONDS = 3
    alias = unique_topic("hbsrc")  # a new alias: its heartbeats are new whatever `heartbeats` already holds
    clusters = {alias: kafka_clusters["us-east"], "backup": kafka_clusters["backup"]}
    obj = flow(
        clusters,
        alias,
        "backup",
        unique_topic("nothing-matches"),
        tasks_max=2,
        emit_heartbeats_enabled=True,
        emit_heartbeats_interval_seconds=1,
    )
    monkeypatch.setattr(
        controller, "_source_partitions", lambda flow, plan_row, listings=None: []
    )  # nothing to replicate yet
    live_worker("w-hb", slots=4)
    assert provisioning.provision(obj.pk)
    dispatched = controller.reconcile(obj)
    task0 = TaskAssignment.objects.get(flow=obj, task_id=0)
    assert task0.partitions == [] and dispatched == [task0.pk], "task 0 only: task 1 has no work and no emitters"

    def beats() -> list[Heartbeat]:
        records = consume_to_end(clusters[alias], "heartbeats", 1)
        found = [Heartbeat.from_bytes(m.key(), m.value()) for m in records]
        return [b for b in found if (b.source_cluster_alias, b.target_cluster_alias) == ("backup", alias)]

    with _running(task0.pk, "worker-hb"):
        wait_until(lambda: _safe(beats), timeout=60, interval=0.5, what="a heartbeat of the flow in its source")
        wait_until(lambda: health(flow_status(obj)) == "healthy", timeout=30, what="the flow healthy")
    assert TaskAssignment.objects.get(pk=task0.pk).reported_partitions == []


def _safe(probe: Any) -> Any:
    try:
        return probe()
    except Exception:  # `heartbeats` does not exist until the first heartbeat creates it
        return None


@pytest.mark.django_db(transaction=True)
def test_a_new_flow_with_tasks_max_4_starts_all_4_tasks_with_no_failure_or_retry(
    kafka_clusters: dict[str, str], settings: Any
) -> None:
    """The flow's topics are provisioned once before its tasks start, so no task's start depends on which
    task created the positions topic (a task that lost the race
    failed with _UNKNOWN_PARTITION and was retried 30 s later)."""
    settings.MIRRORPLANE_LEASE_SECONDS = 3
    alias = unique_topic("fresh")  # a source alias the target has never seen: no positions topic yet
    clusters = {alias: kafka_clusters["us-west"], "us-east": kafka_clusters["us-east"]}
    topic = unique_topic("four")
    create_topic(clusters[alias], topic, partitions=8)
    obj = flow(clusters, alias, "us-east", topic, tasks_max=4)
    live_worker("w-four", slots=4)
    controller.reconcile(obj)
    assert provisioning.provision(obj.pk)
    dispatched = controller.reconcile(obj)
    assert len(dispatched) == 4
    produce_known(clusters[alias], topic, 8, 800)
    seen: set[str] = set()

    def all_running() -> bool:
        tasks = list(TaskAssignment.objects.filter(flow=obj))
        seen.update(f"{t.task_id}: {t.state} {t.last_error}" for t in tasks if t.state == TaskState.FAILED)
        return len(tasks) == 4 and all(t.state == TaskState.RUNNING and t.reported_partitions for t in tasks)

    with ExitStack() as stack:
        for pk in dispatched:
            stack.enter_context(_running(pk, "w-four"))
        wait_until(all_running, timeout=60, interval=0.2, what="all 4 tasks running with their partitions")
        remote = f"{alias}.{topic}"
        wait_until(
            lambda: sum(end_offsets(clusters["us-east"], remote, range(8)).values()) == 800,
            timeout=60,
            what="every record replicated",
        )
        assert not seen, f"no task ever failed: {seen}"
    assert all(t.last_error == "" for t in TaskAssignment.objects.filter(flow=obj))
