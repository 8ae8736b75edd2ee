"""Runs flows standalone, without the control plane: one process per task, SIGTERM stops all cleanly."""

from __future__ import annotations

import logging
import multiprocessing
import multiprocessing.connection
import signal
import sys
import threading
from collections.abc import Sequence
from multiprocessing.synchronize import Event as MpEvent

from confluent_kafka import KafkaException

from replication.cli.parentdeath import die_with_parent
from replication.config import FlowConfig
from replication.emitters.periodic import SideEmitters
from replication.errors import ReplicationError
from replication.kafka.provisioning import provision_flow
from replication.task.dataloss import DataLossError
from replication.task.replicationtask import ReplicationTask
from replication.task.tuning import tune_gc

log = logging.getLogger("replication.runner")


def run_task(flow: FlowConfig, task_id: int, stopping: threading.Event | MpEvent) -> None:
    """Run one task of a provisioned flow until stopping is set; task 0 also keeps remote topics, configs and ACLs
    in sync, and runs the flow's heartbeats, checkpoints and group offset sync beside it."""
    task = ReplicationTask(flow, task_id=task_id, sync_topics=task_id == 0, provisioned=True)
    side = SideEmitters(flow, stopping).start() if task_id == 0 else None
    tune_gc()  # this process does nothing but replicate (bench/README.md: the collector cost 20 % of CPU)
    try:
        task.run(stopping)  # type: ignore[arg-type]  # both Event kinds offer is_set()
    finally:
        if side is not None:
            side.stop()


def _child_main(flow: FlowConfig, task_id: int, stopping: MpEvent) -> None:
    # If the runner is SIGKILLed, its tasks must not live on as duplicates.
    die_with_parent(signal.SIGTERM)  # the fork server, should it die
    _stop_with_runner(stopping)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    logging.basicConfig(level=logging.INFO, format=f"%(asctime)s task {flow.name}/{task_id} %(levelname)s %(message)s")
    try:
        run_task(flow, task_id, stopping)
    except (ReplicationError, DataLossError) as exc:
        log.error("%s", exc)
        sys.exit(2)


def _stop_with_runner(stopping: MpEvent) -> None:
    """Stop every task cleanly once the runner is gone, however it ended. A task's parent is the fork server,
    which lives on after a SIGKILLed runner for as long as its tasks hold its pipe, so the parent-death signal
    alone never comes; the runner's end of the task's own pipe closes with it."""
    runner = multiprocessing.parent_process()
    if runner is None:
        return

    def watch() -> None:
        multiprocessing.connection.wait([runner.sentinel])
        stopping.set()

    threading.Thread(target=watch, name="runner-watch", daemon=True).start()


def run_flows(flows: Sequence[FlowConfig]) -> int:
    """Run every enabled flow's tasks until SIGTERM/SIGINT; returns the process exit code."""
    enabled = [f for f in flows if f.enabled]
    jobs = [(flow, task_id) for flow in enabled for task_id in range(flow.tasks_max)]
    if not jobs:
        log.error("no enabled flow (set a->b.enabled = true)")
        return 1
    try:
        for flow in enabled:  # once, before any task starts: no task's start depends on another's
            provision_flow(flow)
    except (ReplicationError, KafkaException, TimeoutError) as exc:
        text = exc.args[0].str() if isinstance(exc, KafkaException) else str(exc) or "a cluster did not answer in time"
        log.error("%s", text)
        return 2
    if len(jobs) == 1:
        return _run_in_process(*jobs[0])
    return _run_processes(jobs)


def _run_in_process(flow: FlowConfig, task_id: int) -> int:
    stopping = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stopping.set())
    try:
        run_task(flow, task_id, stopping)
    except (ReplicationError, DataLossError) as exc:
        log.error("%s", exc)
        return 2
    return 0


def _run_processes(jobs: list[tuple[FlowConfig, int]]) -> int:
    # Tasks fork from a server that imported the data plane once, before any client or thread existed: they share
    # its pages, where spawned tasks each loaded their own copy (idle-flow memory, bench/README.md). A SIGKILLed
    # runner still takes them along: the server exits when the runner's end of its pipe closes, and each task
    # dies with its parent (die_with_parent).
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["replication.cli.runner"])
    stopping = ctx.Event()
    procs = [ctx.Process(target=_child_main, args=(f, t, stopping), name=f"{f.name}/{t}") for f, t in jobs]
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stopping.set())
    for proc in procs:
        proc.start()
    failed = False
    while any(p.is_alive() for p in procs):
        for proc in procs:
            proc.join(0.5)
            if proc.exitcode not in (None, 0) and not stopping.is_set():
                log.error("task %s exited with %s; stopping the others", proc.name, proc.exitcode)
                failed = True
                stopping.set()
    return 2 if failed or any(p.exitcode for p in procs) else 0
