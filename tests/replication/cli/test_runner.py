"""The standalone runner's sharing of processes among tasks, without Kafka: tasks are stand-ins."""

from __future__ import annotations

import io
import logging
import threading
import time
from collections.abc import Mapping

import pytest

from replication.cli import runner
from replication.config import FlowConfig
from replication.errors import ReplicationError
from tests.replication.fakes import flow


def _jobs(flows: int, tasks: int) -> list[runner.Job]:
    made = [flow(tasks_max=tasks, topics=(f"t{i}",)) for i in range(flows)]
    return [(f, t, {}) for f in made for t in range(tasks)]


def test_tasks_are_dealt_round_robin_so_a_flows_tasks_spread_over_the_processes() -> None:
    jobs = _jobs(2, 3)
    groups = runner.deal(jobs, 2)
    assert [[t for _, t, _ in g] for g in groups] == [[0, 2, 1], [1, 0, 2]]
    assert sorted(id(j) for g in groups for j in g) == sorted(id(j) for j in jobs)  # each job once
    assert runner.deal(jobs, 100) == [[j] for j in jobs]  # never more processes than tasks
    assert len(runner.deal(jobs, 1)) == 1


def test_threads_of_one_process_run_every_task_and_stop_together(monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[int] = []

    def fake_task(flow: FlowConfig, task_id: int, start: Mapping[str, int], stopping: threading.Event) -> None:
        ran.append(task_id)
        assert threading.current_thread().name == f"{flow.name}/{task_id}"  # the log format shows it
        while not stopping.is_set():
            time.sleep(0.01)

    monkeypatch.setattr(runner, "run_task", fake_task)
    stopping = threading.Event()
    threading.Timer(0.3, stopping.set).start()
    assert runner._run_threads(_jobs(1, 3), stopping) == 0
    assert sorted(ran) == [0, 1, 2]


@pytest.mark.parametrize("failure", [ReplicationError("target lost"), RuntimeError("a bug")])
def test_a_failing_task_stops_the_others_of_its_process_and_fails_the_exit_code(
    monkeypatch: pytest.MonkeyPatch, failure: Exception
) -> None:
    stopped: list[int] = []

    def fake_task(flow: FlowConfig, task_id: int, start: Mapping[str, int], stopping: threading.Event) -> None:
        if task_id == 1:
            time.sleep(0.1)
            raise failure
        deadline = time.monotonic() + 10
        while not stopping.is_set():
            assert time.monotonic() < deadline, "the failure did not stop the other tasks"
            time.sleep(0.01)
        stopped.append(task_id)

    monkeypatch.setattr(runner, "run_task", fake_task)
    stopping = threading.Event()
    assert runner._run_threads(_jobs(1, 3), stopping) == 2
    assert stopping.is_set() and sorted(stopped) == [0, 2]


def test_tasks_sharing_the_runners_own_process_name_themselves_in_its_log(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = io.StringIO()
    handler = logging.StreamHandler(lines)
    root = logging.getLogger()
    monkeypatch.setattr(root, "handlers", [handler])
    monkeypatch.setattr(runner.signal, "signal", lambda *args: None)  # pytest keeps its own handlers

    def fake_task(flow: FlowConfig, task_id: int, start: Mapping[str, int], stopping: threading.Event) -> None:
        logging.getLogger("replication.task").warning("assigned")

    monkeypatch.setattr(runner, "run_task", fake_task)
    assert runner._run_in_process(_jobs(1, 2)) == 0
    logged = lines.getvalue()
    assert "task us-west->us-east/0 WARNING assigned" in logged and "task us-west->us-east/1 WARNING" in logged
