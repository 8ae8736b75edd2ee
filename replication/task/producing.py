"""BatchProducer: the hot path. Produces consumed batches to the target with one delivery callback per run."""

from __future__ import annotations

import contextlib
import functools
import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Message, Producer

from replication.errors import AclRefusedError, ReplicationError, missing_acl
from replication.mm2.records import provenance_add, provenance_contains
from replication.offsets.partitionstate import PartitionState, Run
from replication.task.context import TaskContext
from replication.task.handlers import Headers, OutRecord, RecordHandler

PURGED = (KafkaError._PURGE_QUEUE, KafkaError._PURGE_INFLIGHT)
FATAL_DETAIL_WAIT_SECONDS = 3.0  # at most, for the delivery report that tells why a fatal error came
log = logging.getLogger(__name__)
States = dict[tuple[str, int], PartitionState]
Callback = Callable[[KafkaError | None, Message], None]
# Records on the hot path are typed Any: the stubs make offset()/partition() Optional, and a None check per
# record would cost time for a case that cannot happen on a record without error().
Record = Any
_NO_STATE = PartitionState("", -1, "", 0, 0)


def _fetched_from(state: PartitionState, last_offset: int) -> int:
    """Where the consumer read from before this run, and advance it past the run (once per run, not per record).

    acked_next overtakes fetched_next only when the engine moved the consumer forward (a start position or a
    seek after data loss), so the larger of the two is where this stretch of the log began.
    """
    fetched_from = max(state.fetched_next, state.acked_next)
    state.fetched_next = last_offset + 1
    return fetched_from


def _ignore_run(run: Run, downstream: int) -> None:
    pass


class BatchProducer:
    """Wraps the target producer: batch produce, run acknowledgements, failure and fault tracking.

    It knows no transactions: the task's PositionCommitter begins, commits and aborts them on `client`, and
    `replicate` tells it which positions each batch consumed (exactly once, what the open transaction covers).
    """

    def __init__(self, context: TaskContext, on_run_acked: Callable[[Run, int], None] = _ignore_run) -> None:
        flow, task_id = context.flow, context.task_id
        self.client: Producer = context.clients.task_producer(flow, task_id, error_cb=self.error_cb)
        self.flow = flow
        self.metrics = context.metrics
        self.task_id = task_id
        self.failure: str | None = None
        self.refused: str | None = None  # the ACL whose want made the target refuse a send (`missing_acl`)
        self.outstanding = 0  # runs produced and not yet acknowledged, across partitions
        self.last_ack = time.monotonic()
        self.on_run_acked = on_run_acked  # the task's listeners: each run with its last record's downstream offset
        self._purging = False  # failed deliveries are expected: an aborting transaction purges its records
        self._consumed: dict[PartitionState, int] = {}  # next offset per partition, this batch
        self._identity = flow.policy().format_remote_topic("x", "t") == "t"
        self._last_error = ""  # an unreachable target repeats its error: logged when it changes, counted always

    # -- producing -----------------------------------------------------------------------------------
    def replicate(
        self, msgs: list[Record], states: States, handler: RecordHandler | None, on_error: Callable[[Message], None]
    ) -> dict[PartitionState, int]:
        """Produce a consumed batch; returns each partition's next offset after it (exactly once, what the open
        transaction covers; at least once, which positions may move when the batch is acknowledged)."""
        self._consumed = {}
        if handler is None and not self._identity:
            self._replicate_plain(msgs, states, on_error)
        else:
            self._replicate_handled(msgs, states, handler, on_error)
        return self._consumed

    def _replicate_plain(self, msgs: list[Record], states: States, on_error: Callable[[Message], None]) -> None:
        """Records go out unchanged; per record only the produce call and a run-boundary check."""
        produce = self.client.produce
        consumed_ms = time.time() * 1000
        state, remote, topic, part, start, first, count, nbytes = _NO_STATE, "", "", -1, 0, 0, 0, 0
        prev: Record | None = None
        for index, msg in enumerate(msgs):
            if msg.error() is not None:
                on_error(msg)
                continue
            t, p = msg.topic(), msg.partition()
            if p != part or t != topic:
                if prev is not None:
                    self._end_run(msgs, start, prev, state, first, count, nbytes, consumed_ms)
                    prev = None
                state = states[(t, p)]
                remote, topic, part, start, first, count, nbytes = state.remote_topic, t, p, index, msg.offset(), 0, 0
            if prev is not None:
                try:
                    produce(
                        remote, prev.value(), prev.key(), part, timestamp=prev.timestamp()[1], headers=prev.headers()
                    )
                except BufferError:
                    self._produce_when_room(state, prev, None)
                count += 1
                nbytes += len(prev)
            prev = msg
        if prev is not None:
            self._end_run(msgs, start, prev, state, first, count, nbytes, consumed_ms)

    def _end_run(
        self,
        msgs: list[Record],
        start: int,
        last: Record,
        state: PartitionState,
        first: int,
        count: int,
        nbytes: int,
        consumed_ms: float,
    ) -> None:
        last_offset = last.offset()
        count += 1
        upstream = None
        if last_offset - first + 1 != count:  # gaps (compaction, transaction markers): keep exact offsets
            upstream = [
                m.offset()
                for m in msgs[start:]
                if m.partition() == state.partition
                and m.error() is None
                and m.topic() == state.topic
                and m.offset() <= last_offset
            ]
        ts = last.timestamp()[1]
        run = Run(
            state,
            first,
            last_offset,
            count,
            nbytes + len(last),
            ts,
            consumed_ms,
            upstream,
            msgs[start].timestamp()[1],
            _fetched_from(state, last_offset),
        )
        state.inflight += 1
        self._in_flight()
        self._produce_when_room(state, last, functools.partial(self._acked, run))
        self._consumed[state] = run.next_offset

    def _replicate_handled(
        self, msgs: list[Record], states: States, handler: RecordHandler | None, on_error: Callable[[Message], None]
    ) -> None:
        """The general path: a record handler and/or provenance headers; dropped records leave exact gaps."""
        consumed_ms = time.time() * 1000
        runs: dict[PartitionState, list[tuple[Record, OutRecord]]] = {}
        ends: dict[PartitionState, int] = {}
        source, target = self.flow.source.alias, self.flow.target.alias
        for msg in msgs:
            if msg.error() is not None:
                on_error(msg)
                continue
            state = states[(msg.topic(), msg.partition())]
            ends[state] = msg.offset()
            out = handler.handle(msg) if handler is not None else (msg.key(), msg.value(), msg.headers())
            if out is None:
                continue
            key, value, headers = out
            if self._identity:
                if provenance_contains(headers, target):
                    continue  # it has been at the target already: replicating it back would echo it
                headers = provenance_add(headers, source)
            runs.setdefault(state, []).append((msg, (key, value, headers)))
        for state, last in ends.items():
            self._emit_handled_run(state, runs.get(state, []), last, consumed_ms)

    def outgoing(self, msg: Record, handler: RecordHandler | None) -> OutRecord | None:
        """The record the producer sends for msg (key, value, headers), or None if it sends nothing.

        The same transform as the produce paths above (kept inline there: a call per record costs on the hot path);
        replication.task.resume uses it to recognise, at the target, what a crashed task already produced.
        """
        out = handler.handle(msg) if handler is not None else (msg.key(), msg.value(), msg.headers())
        if out is None or not self._identity:
            return out
        key, value, headers = out
        if provenance_contains(headers, self.flow.target.alias):
            return None
        return key, value, provenance_add(headers, self.flow.source.alias)

    def _emit_handled_run(
        self, state: PartitionState, records: list[tuple[Record, OutRecord]], last: int, consumed_ms: float
    ) -> None:
        fetched_from = _fetched_from(state, last)
        if not records:
            state.filtered_run(last + 1)
            self._consumed[state] = last + 1
            return
        upstream = [m.offset() for m, _ in records]
        nbytes = sum(len(v) for _, (_, v, _) in records if v is not None)
        first_ts, ts = records[0][0].timestamp()[1], records[-1][0].timestamp()[1]
        run = Run(state, upstream[0], last, len(records), nbytes, ts, consumed_ms, upstream, first_ts, fetched_from)
        state.inflight += 1
        self._in_flight()
        for i, (msg, (key, value, headers)) in enumerate(records):
            callback = functools.partial(self._acked, run) if i == len(records) - 1 else None
            self._produce_record(state, msg, key, value, headers, callback)
        self._consumed[state] = last + 1

    def _produce_when_room(self, state: PartitionState, msg: Record, callback: Callback | None) -> None:
        self._produce_record(state, msg, msg.key(), msg.value(), msg.headers(), callback)

    def _produce_record(
        self,
        state: PartitionState,
        msg: Record,
        key: bytes | None,
        value: bytes | None,
        headers: Headers,
        callback: Callback | None,
    ) -> None:
        while True:
            try:
                self.client.produce(
                    state.remote_topic,
                    value,
                    key,
                    state.partition,
                    on_delivery=callback,
                    timestamp=msg.timestamp()[1],
                    headers=headers,
                )
                return
            except BufferError:  # the local queue is full: serve delivery reports until there is room
                self.client.poll(0.05)
                self.raise_if_failed()

    # -- acknowledgements and failures ---------------------------------------------------------------
    def _acked(self, run: Run, err: KafkaError | None, msg: Record) -> None:
        if err is not None:
            if err.code() in PURGED:  # an abort's own purge, reported after it: those records were never acked
                return
            refused = missing_acl(err, self.flow.target.alias, "WRITE", run.state.remote_topic)
            # A refusal is the cause even after the gap-less guarantee's fatal error that it brings about.
            if not self._purging and (self.failure is None or (refused and not self.refused)):
                where = f"{run.state.remote_topic} [{run.state.partition}]"
                offsets = f"upstream offsets {run.first_offset}..{run.last_offset}"
                self.failure = (
                    f"{refused} ({offsets})" if refused else f"send to {where} failed ({offsets}): {err.str()}"
                )
                self.refused = refused
            return
        downstream = msg.offset()
        self.outstanding -= 1
        self.last_ack = time.monotonic()
        run.state.run_acked(run.next_offset, downstream)
        now_ms = time.time() * 1000
        self.metrics.record_batch(
            self.flow.name,
            run.state.topic,
            run.state.partition,
            run.count,
            run.nbytes,
            now_ms - run.last_timestamp,
            run.consumed_ms - run.last_timestamp,
        )
        self.on_run_acked(run, downstream)

    def error_cb(self, err: KafkaError) -> None:
        if err.fatal():
            self.fail(f"producer fatal error: {err.str()}")
        else:
            self.metrics.report_fault(self.flow.name, self.task_id, f"target: {err.str()}")
            if err.str() != self._last_error:
                log.warning("%s task %d: target %s", self.flow.name, self.task_id, err.str())
            self._last_error = err.str()

    def fail(self, reason: str) -> None:
        """Record why the producer can deliver no more; the first reason stays."""
        self.failure = self.failure or reason

    def raise_if_failed(self) -> None:
        if self.failure is not None:
            message = f"{self.flow.name} task {self.task_id}: {self.failure} (abort.on.send.fail)"
            raise ReplicationError(message) if self.refused is None else AclRefusedError(message, self.refused)

    def fatal_detail(self, wait: float = FATAL_DETAIL_WAIT_SECONDS) -> str | None:
        """Serve pending callbacks so a fatal error's real reason reaches `failure`, and return it.

        The refused send behind a fatal error can be reported a moment after produce() raised it: delivery reports
        are served for up to `wait` seconds while records are still held, so the refusal, not "Fatal error", is
        what the task stops with."""
        deadline = time.monotonic() + wait
        while True:
            with contextlib.suppress(KafkaException, SystemError):  # the same fatal error; its reason via error_cb
                self.client.poll(0.05)
            if self.refused is not None or len(self.client) == 0 or time.monotonic() >= deadline:
                return self.failure

    @contextlib.contextmanager
    def purging(self) -> Iterator[None]:
        """Inside, a failed delivery is no failure: aborting a transaction purges the records it held."""
        self._purging = True
        try:
            yield
        finally:
            self._purging = False

    def _in_flight(self) -> None:
        """One more run in flight. The stall clock starts with the first run sent after everything was acknowledged,
        not at the last acknowledgement: after an idle spell that would report a stall at once."""
        if self.outstanding == 0:
            self.last_ack = time.monotonic()
        self.outstanding += 1

    def stalled_for(self, now: float) -> float:
        """Seconds the target has kept records unacknowledged (0 when nothing is in flight)."""
        return now - self.last_ack if self.outstanding > 0 else 0.0

    def forget_outstanding(self) -> None:
        """After an aborted transaction nothing is in flight any more."""
        self.outstanding = 0
        self.last_ack = time.monotonic()

    def poll(self) -> None:
        self.client.poll(0)
        self.raise_if_failed()

    def flush_all(self, timeout: float = 30.0) -> None:
        """Wait for every outstanding delivery (to a deadline); a fatal client error becomes the failure."""
        deadline = time.monotonic() + timeout
        try:
            while self.client.flush(0.5) > 0 and time.monotonic() < deadline:
                self.raise_if_failed()
        except (KafkaException, SystemError) as exc:
            self.fail(f"producer: {exc.__cause__ or exc}")
        self.raise_if_failed()
