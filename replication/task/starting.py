"""Where a task starts each partition it takes: its stored position, checked against the source and the target.

The source side is dataloss.check_start (a retention gap, a recreated source topic). The target side is here: the
target partition's end offset E, read for all new partitions in one call, against the downstream offset D stored
with the position (at least once only):
- E == D: nothing was written after the stored position; start there.
- E > D: a crashed task wrote E - D offsets after it; replication.task.resume verifies them and the task starts after
  the records it finds, so it does not write them twice.
- 0 < E < D: the target lost replicated records (unclean leader election, a recreated remote topic): data loss,
  reported, and on.data.loss decides.
- E == 0 although records were written (without D: although the source was read past its start): the remote topic
  was recreated; the partition is replicated again from the source log start.
A position without D (written by an older version, or in exactly-once mode, where transactions already keep
the target free of duplicates) starts at the stored position, as it always did.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass

from confluent_kafka import Consumer, IsolationLevel, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from replication.clientlog import logged
from replication.config import FlowConfig
from replication.kafka.clients import position_reader_config
from replication.kafka.positions import Position
from replication.offsets.partitionstate import PartitionState, Run
from replication.task.context import TaskContext
from replication.task.dataloss import DataLossError, target_truncated
from replication.task.faults import FaultReporter
from replication.task.resume import Outgoing, Verified, Window, WindowVerifier

log = logging.getLogger(__name__)
RemotePartition = tuple[str, int]


@dataclass(frozen=True)
class StartPlan:
    """Where a partition starts, and what to verify or report first."""

    offset: int
    window: Window | None = None  # offsets a crashed task wrote after the stored position: verify, then skip
    loss: DataLossError | None = None  # the target lost replicated records
    recreated: bool = False  # the remote topic is empty although records were replicated to it
    note: str | None = None  # why records written after the stored position, if any, are copied again


def plan_start(
    flow: FlowConfig,
    topic: str,
    partition: int,
    remote: str,
    stored: Position | None,
    start: int,
    low: int,
    end: int | None,
) -> StartPlan:
    """The plan for a partition whose source check gave `start`, given the target partition's end offset."""
    down = None if stored is None or stored.remote != remote else stored.downstream
    if stored is not None and end == 0 and start > low and (down is None or down > 0):
        return StartPlan(low, recreated=True)
    if stored is None or start != stored.next_offset or flow.exactly_once:
        return StartPlan(start)
    if stored.downstream is not None and stored.remote != remote:
        note = f"position stored for target topic {stored.remote} (another replication policy, or another flow)"
        return StartPlan(start, note=f"{note}: records written to {remote} after it are copied again")
    if down is None:
        note = "position stored without a downstream offset (by an older version)"
        return StartPlan(start, note=f"{note}: records the target acknowledged after it are copied again")
    if end is None:
        return StartPlan(start, note="target end offset unknown: records written after the position are copied again")
    if end < down:
        return StartPlan(start, loss=target_truncated(topic, partition, remote, start, down, end))
    if end > down:
        return StartPlan(start, window=Window(topic, partition, remote, start, down, end))
    return StartPlan(start)


def report_start(faults: FaultReporter, plan: StartPlan, key: tuple[str, int], remote: str, position: int) -> None:
    """Say what a plan found: a recreated remote topic (a fault), why nothing is verified (a log line), a loss."""
    name, task_id = faults.flow.name, faults.task_id
    if plan.recreated:
        log.error(
            "%s task %d: %s [%d] is empty at the target although offsets up to %d were replicated: "
            "the remote topic was deleted or recreated; re-replicating from source offset %d",
            name,
            task_id,
            remote,
            key[1],
            position - 1,
            plan.offset,
        )
        faults.report(f"remote topic {remote} was recreated; re-replicating from source offset {plan.offset}")
    if plan.note is not None:
        log.info("%s task %d: %s-%d at %d: %s", name, task_id, key[0], key[1], plan.offset, plan.note)
    faults.data_loss(plan.loss, *key)


def target_end_offsets(admin: AdminClient, partitions: Sequence[RemotePartition]) -> dict[RemotePartition, int]:
    """The target's end offsets of these partitions, in one ListOffsets call; a partition it cannot tell is left out.

    A remote topic created a moment ago may not be known yet: its partitions then have no downstream offset to
    store before their first acknowledgement, which costs nothing but a re-copy after a crash in that moment.
    """
    if not partitions:
        return {}
    latest = OffsetSpec.latest()  # type: ignore[no-untyped-call]  # the stub leaves it unannotated
    request = {TopicPartition(topic, partition): latest for topic, partition in partitions}
    ends: dict[RemotePartition, int] = {}
    try:
        futures = admin.list_offsets(request, request_timeout=30)
    except KafkaException as exc:
        log.warning("target end offsets not read: %s", exc)
        return ends
    unread: list[str] = []
    for tp, future in futures.items():
        try:
            ends[(tp.topic, tp.partition)] = int(future.result(timeout=60).offset)
        except (KafkaException, FutureTimeout) as exc:
            unread.append(f"{tp.topic} [{tp.partition}]: {exc}")
    if unread:  # one line, not one per partition: a new remote topic's metadata can lag for thousands
        log.warning("target end offsets of %d partitions not read, e.g. %s", len(unread), unread[0])
    return ends


def source_watermarks(
    admin: AdminClient, keys: Sequence[RemotePartition], read_committed: bool
) -> dict[RemotePartition, tuple[int, int]]:
    """Log start and end offsets of many source partitions: two ListOffsets calls in flight together, instead of
    one blocking watermark call per partition (each waited behind the consumer's fetch long-poll, ~0.5 s: 104 s to
    pick up 200 partitions). A partition left out (not in the broker's metadata yet) is the caller's to ask alone.
    The end is what the task's consumer would see: the last stable offset when it reads committed records.
    """
    if not keys:
        return {}
    specs = {
        "low": OffsetSpec.earliest(),  # type: ignore[no-untyped-call]  # the stub leaves it unannotated
        "high": OffsetSpec.latest(),  # type: ignore[no-untyped-call]  # confluent-kafka: unannotated
    }
    isolation = IsolationLevel.READ_COMMITTED if read_committed else IsolationLevel.READ_UNCOMMITTED
    try:
        calls = {
            name: admin.list_offsets(
                {TopicPartition(t, p): spec for t, p in keys}, isolation_level=isolation, request_timeout=30
            )
            for name, spec in specs.items()
        }
    except KafkaException as exc:
        log.warning("source offsets not read in one call: %s", exc)
        return {}
    found: dict[str, dict[RemotePartition, int]] = {name: {} for name in calls}
    for name, futures in calls.items():
        for tp, future in futures.items():
            # A partition that fails here is asked again alone, with the wait for metadata a new one may need.
            with contextlib.suppress(KafkaException, FutureTimeout):
                found[name][(tp.topic, tp.partition)] = int(future.result(timeout=60).offset)
    low, high = found["low"], found["high"]
    return {key: (low[key], high[key]) for key in keys if key in low and key in high}


class Resumer:
    """Verifies the windows of a task's new partitions, and starts each partition after the records found.

    The records found are handed to the task's listeners as one acknowledged run per partition, so the offset syncs
    and facts of a restart cover them as the crashed task would have.
    """

    def __init__(self, context: TaskContext, run_acked: Callable[[Run, int], None], timeout: float = 120.0) -> None:
        self.flow = context.flow
        self.task_id = context.task_id
        self.clients = context.clients
        self.faults = context.faults
        self.run_acked = run_acked
        self.timeout = timeout

    def resume(self, windows: Sequence[Window], states: dict[tuple[str, int], PartitionState], out: Outgoing) -> None:
        eof = {"enable.partition.eof": True}
        source = self.clients.task_consumer(self.flow, self.task_id, settings=eof)  # the task consumer's isolation
        target = Consumer(logged({**position_reader_config(self.flow, self.task_id), **eof}))
        try:
            results = WindowVerifier(source, target, out, self.timeout).verify(windows)
        finally:
            source.close()
            target.close()
        for result in results:
            self._skip(result, states[(result.window.topic, result.window.partition)])

    def _skip(self, result: Verified, state: PartitionState) -> None:
        window = result.window
        if result.count:
            state.acked_next = result.resume_at  # stored_next stays: store_start_positions writes the new one
            state.last_downstream = window.downstream + result.count - 1
            up = result.upstream
            gaps = None if up[-1] - up[0] + 1 == len(up) else up
            consumed_ms = time.time() * 1000
            run = Run(
                state,
                up[0],
                up[-1],
                result.count,
                result.nbytes,
                result.last_timestamp,
                consumed_ms,
                gaps,
                result.first_timestamp,
                window.next_offset,
            )
            self.run_acked(run, state.last_downstream)
            self._log(result)
        self.faults.metrics.add_resume(self.flow.name, window.topic, window.partition, result.count, None)
        if result.mismatch is not None:
            self.faults.resume_mismatch(result.mismatch)

    def _log(self, result: Verified) -> None:
        window = result.window
        log.info(
            "%s task %d: %s [%d]: %d of %d offsets after the stored position (target %s [%d] %d..%d) hold records "
            "already produced from source offsets %d..%d: not producing them again, resuming at %d",
            self.flow.name,
            self.task_id,
            window.topic,
            window.partition,
            result.count,
            window.size,
            window.remote_topic,
            window.partition,
            window.downstream,
            window.end - 1,
            window.next_offset,
            result.resume_at - 1,
            result.resume_at,
        )
