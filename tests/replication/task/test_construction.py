"""A task is whole once built: what its start makes is one Started value, and its parts share one TaskContext."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from replication.config import ClusterConfig, FlowConfig
from replication.metrics.registry import MetricsRegistry
from replication.task.replicationtask import NotStartedError, ReplicationTask
from tests.replication.fakes import FakeProducer, flow


class _Clients:
    """The ClientFactory calls a task makes when it builds its parts; none of them talks to a broker."""

    def __init__(self) -> None:
        self.closed: list[str] = []

    def admin(self, cluster: ClusterConfig) -> Any:
        return SimpleNamespace(alias=cluster.alias)

    def task_consumer(self, flow: FlowConfig, task_id: int, error_cb: Any = None, settings: Any = None) -> Any:
        return SimpleNamespace(position=lambda tps: tps, close=lambda: self.closed.append("consumer"))

    def task_producer(self, flow: FlowConfig, task_id: int, error_cb: Any = None) -> FakeProducer:
        return FakeProducer()


def test_a_task_never_started_has_every_attribute_no_states_and_names_what_it_lacks() -> None:
    clients = _Clients()
    task = ReplicationTask(flow(), clients=clients, metrics=MetricsRegistry())  # type: ignore[arg-type]
    assert task.started is None and task.states == {} and task.offset_syncs is None and task.facts is None
    with pytest.raises(NotStartedError, match="us-west->us-east task 0: not started"):
        task.consumer  # noqa: B018
    task.close()  # nothing was made, so nothing is stored or closed
    assert clients.closed == []


def test_the_parts_a_task_builds_share_its_one_context() -> None:
    clients, metrics = _Clients(), MetricsRegistry()
    task = ReplicationTask(flow(), task_id=2, clients=clients, metrics=metrics)  # type: ignore[arg-type]
    started = task._build()
    assert task.context.task_id == 2 and task.context.flow is task.flow and task.context.clients is clients
    assert started.committer.faults is task.faults and started.resumer.faults is task.faults
    assert started.producer.metrics is metrics and started.committer.metrics is metrics
    assert (started.producer.task_id, started.committer.task_id, started.resumer.task_id) == (2, 2, 2)
    assert started.committer.positions_topic == task.positions_topic == "mirrorplane-positions.us-west.internal"
    assert [type(listener).__name__ for listener in task.listeners] == ["OffsetSyncEmitter"]
    task.close()  # never started: the consumer its build made is closed all the same
    assert clients.closed == ["consumer"]
