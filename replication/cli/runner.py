"""Runs flows standalone, without the control plane: SIGTERM stops every task cleanly.

By default each task is a process of its own. With `processes`, the tasks are dealt round-robin over that many
processes and share them as threads: memory then grows with the processes, not with the flows (an idle task's
share is its clients and its state), and an idle task's thread sleeps in librdkafka without holding the GIL.
"""

from __future__ import annotations

import logging
import multiprocessing
import multiprocessing.connection
import signal
import sys
import threading
from collections.abc import Mapping, Sequence
from multiprocessing.synchronize import Event as MpEvent
from typing import Any

from confluent_kafka import KafkaException

from replication.cli.parentdeath import die_with_parent
from replication.config import FlowConfig
from replication.emitters.periodic import SideEmitters
from replication.errors import AclRefusedError, ReplicationError
from replication.kafka.provisioning import provision_flow
from replication.task.dataloss import DataLossError
from replication.task.ownership import PlannedOwner
from replication.task.replicationtask import ReplicationTask
from replication.task.tuning import tune_gc

log = logging.getLogger(__name__)
REFUSED_BACKOFF_SECONDS = (2.0, 30.0)  # between starts of a task whose sends the target refuses (first, most)


def run_task(flow: FlowConfig, task_id: int, start: Mapping[str, int], stopping: threading.Event | MpEvent) -> None:
    """Run one task of a provisioned flow until stopping is set; task 0 also keeps remote topics, configs and ACLs
    in sync, and runs the flow's heartbeats, checkpoints and group offset sync beside it. `start` is the source
    topics provisioning listed, which every task of the flow deals alike (replication.task.ownership)."""
    owns = PlannedOwner(start, flow.tasks_max, task_id)
    task = ReplicationTask(flow, task_id=task_id, owns=owns, sync_topics=task_id == 0, provisioned=True)
    side = SideEmitters(flow, stopping).start() if task_id == 0 else None
    tune_gc()  # this process does nothing but replicate (bench/README.md: the collector cost 20 % of CPU)
    try:
        task.run(stopping)  # type: ignore[arg-type]  # both Event kinds offer is_set()
    finally:
        if side is not None:
            side.stop()


def run_refusing(
    flow: FlowConfig,
    task_id: int,
    start: Mapping[str, int],
    stopping: threading.Event | MpEvent,
    backoff: tuple[float, float] = REFUSED_BACKOFF_SECONDS,
) -> None:
    """`run_task`, started again while the target refuses its sends for want of an ACL: each stop stored no position
    past an acknowledgement, so each start resumes exactly where the last acknowledged record left off, and the
    first one after the grant copies on. The refusal is logged once (and again only if it changes), with the wait
    between starts doubling from the first to the second of `backoff`; the flow's other tasks go on meanwhile."""
    said, wait = "", backoff[0]
    while True:
        try:
            run_task(flow, task_id, start, stopping)
        except AclRefusedError as exc:
            if exc.refusal != said:  # the same ACL at every attempt, whatever offsets each one reached
                log.error("%s; starting again every %.0f s at most until it is granted", exc, backoff[1])
            said = exc.refusal
            if stopping.wait(wait):
                return
            wait = min(wait * 2, backoff[1])
            continue
        return


Job = tuple[FlowConfig, int, Mapping[str, int]]  # a flow, one of its task ids, and its source topics at the start
TASK_LOG_FORMAT = "%(asctime)s task %(threadName)s %(levelname)s %(message)s"  # a task's thread bears its name


def _child_main(jobs: list[Job], stopping: MpEvent) -> None:
    # If the runner is SIGKILLed, its tasks must not live on as duplicates.
    die_with_parent(signal.SIGTERM)  # the fork server, should it die
    _stop_with_runner(stopping)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    logging.basicConfig(level=logging.INFO, format=TASK_LOG_FORMAT)
    sys.exit(_run_threads(jobs, stopping))


def _run_threads(jobs: list[Job], stopping: threading.Event | MpEvent) -> int:
    """Run each job as a thread of this process (named after its task, which every log line shows) until
    stopping is set; a task that fails stops the others. Returns the exit code: 2 if any task failed."""
    failures: list[Job] = []

    def one(flow: FlowConfig, task_id: int, start: Mapping[str, int]) -> None:
        try:
            run_refusing(flow, task_id, start, stopping)
        except (ReplicationError, DataLossError) as exc:
            log.error("%s", exc)
            failures.append((flow, task_id, start))
        except BaseException:
            log.exception("task %s/%d failed", flow.name, task_id)
            failures.append((flow, task_id, start))
        finally:
            if failures:
                stopping.set()

    if len(jobs) == 1:  # no thread needed
        one(*jobs[0])
        return 2 if failures else 0
    threads = [threading.Thread(target=one, args=job, name=f"{job[0].name}/{job[1]}") for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        while thread.is_alive():  # a timed join keeps the main thread free for signal handlers
            thread.join(0.5)
    return 2 if failures else 0


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


class StartupStopped(Exception):
    """A stop signal arrived before any task ran: there is no position to store, and the runner exits 0."""


class StopSignals:
    """SIGTERM and SIGINT from the first moment of a run. Before the tasks start they end start-up at once (loading
    the file, provisioning, however long a cluster takes to answer) with StartupStopped; once the tasks run they set
    `stopping`, and every task stores its positions and returns. Either way the exit code is 0."""

    def __init__(self) -> None:
        self.stopping = threading.Event()
        self._starting = True
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._handle)

    def _handle(self, signum: int, _frame: object) -> None:
        self.stopping.set()
        if self._starting:
            raise StartupStopped(signal.Signals(signum).name)

    def started(self) -> None:
        """From here on a signal only sets `stopping`: the tasks stop themselves."""
        self._starting = False


def run_flows(flows: Sequence[FlowConfig], processes: int | None = None, signals: StopSignals | None = None) -> int:
    """Run every enabled flow's tasks until SIGTERM/SIGINT, one process per task or the tasks dealt over
    `processes` processes; returns the process exit code."""
    signals = signals or StopSignals()
    enabled = [f for f in flows if f.enabled]
    if not enabled:
        log.error("no enabled flow (set a->b.enabled = true)")
        return 1
    try:
        # Once, before any task starts: no task's start depends on another's.
        starts = _provision(enabled, signals.stopping)
    except StartupStopped as stop:
        log.info("stopped by %s while provisioning, before any task started", stop)
        return 0
    except (ReplicationError, KafkaException, TimeoutError) as exc:
        text = exc.args[0].str() if isinstance(exc, KafkaException) else str(exc) or "a cluster did not answer in time"
        log.error("%s", text)
        return 2
    signals.started()
    if signals.stopping.is_set():
        log.info("stopped before any task started")
        return 0
    jobs = [
        (flow, task_id, start) for flow, start in zip(enabled, starts, strict=True) for task_id in range(flow.tasks_max)
    ]
    groups = deal(jobs, len(jobs) if processes is None else processes)
    if len(groups) == 1:
        return _run_in_process(groups[0], signals.stopping)
    return _run_processes(groups, signals.stopping)


def _provision(flows: list[FlowConfig], stopping: threading.Event) -> list[Mapping[str, int]]:
    """Provision the flows in a thread of its own, so that a stop signal ends start-up at once: librdkafka's calls
    block the thread that makes them for up to their timeouts (a cluster that does not answer holds provisioning
    to its deadline), and Python runs a signal handler only in the main thread, between calls. Provisioning only
    creates what is missing, so a start-up left half done is completed by the next."""
    outcome: dict[str, Any] = {}

    def provision() -> None:
        try:
            outcome["starts"] = [provision_flow(flow).source_topics for flow in flows]
        except Exception as exc:  # re-raised in the main thread
            outcome["error"] = exc

    thread = threading.Thread(target=provision, name="provisioning", daemon=True)
    thread.start()
    while thread.is_alive():
        thread.join(0.2)  # a timed join keeps the main thread free for signal handlers
        if stopping.is_set():
            raise StartupStopped("a stop signal")
    if "error" in outcome:
        raise outcome["error"]
    starts: list[Mapping[str, int]] = outcome["starts"]
    return starts


def deal(jobs: list[Job], processes: int) -> list[list[Job]]:
    """The jobs dealt round-robin over at most `processes` groups, so that a flow's tasks spread over them."""
    count = max(1, min(processes, len(jobs)))
    return [jobs[i::count] for i in range(count)]


def _run_in_process(jobs: list[Job], stopping: threading.Event) -> int:
    if len(jobs) > 1:  # several tasks' lines in one log: each names its task, as a task process's do
        for handler in logging.getLogger().handlers:
            handler.setFormatter(logging.Formatter(TASK_LOG_FORMAT))
    return _run_threads(jobs, stopping)


def _run_processes(groups: list[list[Job]], stopped: threading.Event) -> int:
    # Tasks fork from a server that imported the data plane once, before any client or thread existed: they share
    # its pages, where spawned tasks each loaded their own copy (idle-flow memory, bench/README.md). A SIGKILLed
    # runner still takes them along: the server exits when the runner's end of its pipe closes, and each task
    # dies with its parent (die_with_parent).
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["replication.cli.runner"])
    stopping = ctx.Event()
    procs = [ctx.Process(target=_child_main, args=(g, stopping), name=_group_name(g)) for g in groups]
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stopping.set())
    if stopped.is_set():  # a signal between the end of start-up and the line above
        return 0
    for proc in procs:
        proc.start()
    failed = False
    while any(p.is_alive() for p in procs):
        for proc in procs:
            proc.join(0.5)
            if proc.exitcode not in (None, 0) and not stopping.is_set():
                log.error("the process of task %s exited with %s; stopping the others", proc.name, proc.exitcode)
                failed = True
                stopping.set()
    return 2 if failed or any(p.exitcode for p in procs) else 0


def _group_name(group: list[Job]) -> str:
    return ", ".join(f"{flow.name}/{task_id}" for flow, task_id, _ in group)
