"""The standalone runner's sharing of processes among tasks, without Kafka: tasks are stand-ins."""

from __future__ import annotations

import io
import logging
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path

import pytest

from replication.cli import runner
from replication.config import FlowConfig
from replication.errors import AclRefusedError, ReplicationError
from tests.replication.fakes import flow

REPO = Path(__file__).resolve().parents[3]


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
    assert runner._run_in_process(_jobs(1, 2), threading.Event()) == 0
    logged = lines.getvalue()
    assert "task us-west->us-east/0 WARNING assigned" in logged and "task us-west->us-east/1 WARNING" in logged


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port  # closed again: nothing listens there


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.parametrize("after", [0.0, 3.0])
def test_a_stop_signal_at_any_moment_of_start_up_exits_0(tmp_path: Path, signum: int, after: float) -> None:
    """Start-up (interpreter, file, provisioning against clusters that do not answer) ends at once on SIGTERM or
    SIGINT with exit 0: no task ran, so there is no position to store. Before, the handlers came after
    provisioning, and a SIGTERM during it ended the runner with -15. The clusters accept connections and never
    answer: a refused connection would end start-up by itself, naming the cluster."""
    silent = [socket.create_server(("127.0.0.1", 0)) for _ in range(2)]
    source, target = (listener.getsockname()[1] for listener in silent)
    config = tmp_path / "mm2.properties"
    config.write_text(
        "clusters = a, b\n"
        f"a.bootstrap.servers = 127.0.0.1:{source}\n"
        f"b.bootstrap.servers = 127.0.0.1:{target}\n"
        "a->b.enabled = true\n"
        "a->b.topics = t\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "replication", "run", "--config", str(config)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    _wait_for_handler(proc.pid)  # as soon as the run's handlers are in place (a loaded machine takes seconds)
    time.sleep(after)  # then, with `after`, in provisioning: the clusters never answer, so it waits to its deadline
    sent = time.monotonic()
    proc.send_signal(signum)
    out, _ = proc.communicate(timeout=30)
    for listener in silent:
        listener.close()
    assert proc.returncode == 0, out
    assert time.monotonic() - sent < 10, "the stop waited for provisioning's deadline"


def test_a_cluster_that_refuses_connections_ends_start_up_naming_it(tmp_path: Path) -> None:
    source, target = _closed_port(), _closed_port()
    config = tmp_path / "mm2.properties"
    config.write_text(
        "clusters = a, b\n"
        f"a.bootstrap.servers = 127.0.0.1:{source}\n"
        f"b.bootstrap.servers = 127.0.0.1:{target}\n"
        "a->b.enabled = true\n"
    )
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "replication", "run", "--config", str(config)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert time.monotonic() - started < 20
    assert f"a->b: cannot use a: 127.0.0.1:{source}/bootstrap: Connect to ipv4#127.0.0.1:{source} failed" in done.stderr


def _wait_for_handler(pid: int) -> None:
    """Until the process catches SIGTERM (SigCgt in /proc/<pid>/status): the run's handlers for SIGTERM and SIGINT
    are then in place. The interpreter's own start-up, before the runner's code runs, is not the runner's to handle."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        status = Path(f"/proc/{pid}/status").read_text()
        caught = int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:")), 16)
        if caught & (1 << (signal.SIGTERM - 1)):
            return
        time.sleep(0.005)
    raise AssertionError("the runner never installed its stop handlers")


def test_a_task_the_target_refuses_is_started_again_until_granted_and_the_refusal_is_logged_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    refusal = "us-east refused WRITE on TOPIC us-west.orders (TOPIC_AUTHORIZATION_FAILED): grant it"
    outcomes: list[BaseException | None] = [
        AclRefusedError(f"f task 0: {refusal} (upstream offsets 0..9)", refusal),
        AclRefusedError(f"f task 0: {refusal} (upstream offsets 0..12)", refusal),  # further along, same ACL
        None,  # granted: runs until stopping
    ]
    starts: list[float] = []

    def run_task(*_: object) -> None:
        starts.append(time.monotonic())
        outcome = outcomes.pop(0)
        if outcome is not None:
            raise outcome

    monkeypatch.setattr(runner, "run_task", run_task)
    with caplog.at_level(logging.INFO, logger="replication.cli.runner"):
        runner.run_refusing(flow(), 0, {}, threading.Event(), backoff=(0.05, 0.1))
    assert len(starts) == 3 and outcomes == []
    assert starts[2] - starts[1] >= 0.1 - 0.01  # the wait doubled, up to its most
    refused = [r.getMessage() for r in caplog.records if "refused WRITE" in r.getMessage()]
    assert len(refused) == 1, refused


def test_a_stop_while_waiting_for_a_grant_ends_the_task_at_once() -> None:
    stopping = threading.Event()
    stopping.set()
    calls = 0

    def refused(*_: object) -> None:
        nonlocal calls
        calls += 1
        raise AclRefusedError("f task 0: refused", "refused")

    began = time.monotonic()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(runner, "run_task", refused)
        runner.run_refusing(flow(), 0, {}, stopping, backoff=(30.0, 60.0))
    assert calls == 1 and time.monotonic() - began < 5
