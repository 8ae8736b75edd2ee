"""PositionCommitter: owns a task's positions and transactions, and makes what the target acknowledged durable."""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, TopicPartition

from replication.errors import AclRefusedError, ReplicationError, missing_acl
from replication.kafka import positions
from replication.offsets.partitionstate import SETTLED_SWEEP_SECONDS, PartitionState, Sweep, TaskListener
from replication.task.context import TaskContext
from replication.task.handlers import RecordHandler
from replication.task.producing import BatchProducer

log = logging.getLogger(__name__)
DuePositions = list[tuple[positions.TopicPartitionKey, positions.Position]]


class PositionCommitter:
    """The one owner of a task's positions and of its producer's transactions.

    It holds each assigned partition's PartitionState, writes their positions to the positions topic and tells the
    task's listener what became durable. At least once, a position is written after the target acknowledged every
    record before it. Exactly once, it alone initialises, begins, commits and aborts the producer's transactions:
    positions are written in the open transaction (KIP-98: the consumed positions commit with the records, or
    neither does), and a fenced producer stops the task.
    """

    def __init__(
        self, context: TaskContext, producer: BatchProducer, consumer: Consumer, listener: TaskListener
    ) -> None:
        self.flow = context.flow
        self.task_id = context.task_id
        self.metrics = context.metrics
        self.producer = producer
        self.consumer = consumer
        self.faults = context.faults
        self.positions_topic = context.positions_topic
        self.listener = listener
        self.states: dict[positions.TopicPartitionKey, PartitionState] = {}
        self.txn_started: float | None = None  # when the open transaction began (exactly once)
        self.consumed_next: dict[PartitionState, int] = {}  # exactly once: positions the open transaction covers
        # A store looks at the partitions consumed from since their position was last stored, at the unsettled ones
        # once per sweep (5 s), and at all of them once per SETTLED_SWEEP_SECONDS: an idle partition's position
        # cannot move, and a settled one's end offset moves without a record only over markers alone.
        self.sweep: Sweep[PartitionState] = Sweep()
        self._settled_due = 0.0
        # Each partition's TopicPartition, made once: a sweep asks every partition's cached end offset with it, and
        # made them again each time (2,500 per task every 5 s at 10,000 partitions).
        self._sources: dict[PartitionState, TopicPartition] = {}
        self.clock: Callable[[], float] = time.monotonic

    def init_transactions(self) -> None:
        """Exactly once: fence any zombie with our transactional.id, before the task reads its positions."""
        if self.flow.exactly_once:
            self.producer.client.init_transactions(60)

    def track(self, state: PartitionState) -> None:
        """Take a newly assigned partition's state; its position is committed from now on."""
        self.states[(state.topic, state.partition)] = state
        self._sources[state] = TopicPartition(state.topic, state.partition)
        self.sweep.moved.add(state)

    def replicate(self, msgs: list[Any], handler: RecordHandler | None, on_error: Callable[[Message], None]) -> None:
        """Produce a consumed batch; exactly once, the open transaction now covers the positions it consumed."""
        consumed = self.producer.replicate(msgs, self.states, handler, on_error)
        self.sweep.moved.update(consumed)
        if self.flow.exactly_once:
            self.consumed_next.update(consumed)

    def store_positions(self) -> None:
        """At least once: write every position that moved since the last store."""
        self.producer.raise_if_failed()
        due = self._due_positions()
        positions.write(self.producer.client, self.positions_topic, due)
        self._stored_positions(due)

    def store_start_positions(
        self, keys: list[positions.TopicPartitionKey], stored: dict[positions.TopicPartitionKey, positions.Position]
    ) -> None:
        """At least once: make new partitions' start durable, with the target's end offset, before any of their
        records is produced, unless that is already what is stored. A task killed before its first periodic store
        then resumes from these and skips what it wrote (replication.task.resume) instead of copying it again."""
        if self.flow.exactly_once:
            return  # transactions keep the target free of duplicates; nothing to write outside one
        due: DuePositions = []
        for key in keys:
            state = self.states[key]
            down = state.downstream_next()
            old = stored.get(key)
            new = (state.acked_next, down, state.remote_topic)
            if down is not None and (old is None or (old.next_offset, old.downstream, old.remote) != new):
                position = positions.Position(
                    state.acked_next, max(state.hw, state.acked_next), down, state.remote_topic
                )
                due.append((key, position))
        if not due:
            return
        positions.write(self.producer.client, self.positions_topic, due)
        self.producer.flush_all()
        for key, position in due:
            self.states[key].stored_next = position.next_offset
            self.metrics.set_position(self.flow.name, key[0], key[1], position.next_offset)

    def store_final_positions(self) -> None:
        if self.flow.exactly_once:
            self.commit_transaction()
        else:
            self.producer.flush_all()
            self.store_positions()
            self.producer.flush_all()

    # -- exactly once --------------------------------------------------------------------------------
    def begin_transaction(self, now: float) -> None:
        """Open a transaction unless one is open."""
        if self.txn_started is None:
            self.producer.client.begin_transaction()
            self.txn_started = now

    def commit_when_due(self, now: float, full_batch: bool) -> None:
        """Commit as soon as the task has replicated everything the source had, or when the transaction is
        `transaction.boundary.interval.ms` old.

        Records become visible only when their transaction commits, so waiting out the interval with nothing left
        to read adds latency and batches nothing. Under a backlog the consumer returns full batches and
        transactions last the whole interval, as before, so throughput keeps its batching.
        """
        if self.txn_started is None:
            return
        if now - self.txn_started >= self.flow.transaction_boundary_interval_ms / 1000 or (
            not full_batch and self._caught_up()
        ):
            self.commit_transaction()

    def _caught_up(self) -> bool:
        """The open transaction holds records, and each of its partitions was read to the source end offset last
        seen (the consumer's cached high watermark, from its fetch responses: no request)."""
        covered = self.consumed_next
        return bool(covered) and all(
            self.consumer.get_watermark_offsets(TopicPartition(state.topic, state.partition), cached=True)[1] <= next_
            for state, next_ in covered.items()
        )

    def commit_transaction(self) -> None:
        """Exactly-once: records and their positions commit together, or neither does."""
        if self.txn_started is None:
            return
        self.producer.raise_if_failed()
        written = [*sorted({state.remote_topic for state in self.consumed_next}), self.positions_topic]
        for state, next_offset in self.consumed_next.items():  # the transaction covers what it produced
            state.acked_next = max(state.acked_next, next_offset)
        self.consumed_next.clear()
        due = self._due_positions()
        positions.write(self.producer.client, self.positions_topic, due)
        try:
            self.producer.client.commit_transaction(60)
        except KafkaException as exc:
            self._transaction_failed(exc, written)
            return
        finally:
            self.txn_started = None
        self._stored_positions(due)
        for key, _ in due:  # the transaction's records are visible now: the lag stops counting them
            state = self.states[key]
            # The end offset again (cached: no request): the source moved on while the commit blocked.
            state.hw = self.consumer.get_watermark_offsets(self._sources[state], cached=True)[1]
            self._set_lag(state, max(state.hw - state.stored_next, 0))

    def _transaction_failed(self, exc: KafkaException, written: list[str]) -> None:
        error: KafkaError = exc.args[0]
        # AddPartitionsToTxn refused: which of the topics the transaction wrote lacks WRITE, the broker does not say.
        refused = missing_acl(error, self.flow.target.alias, "WRITE", " or ".join(written))
        if refused is not None:
            with self.producer.purging(), contextlib.suppress(KafkaException):
                self.producer.client.abort_transaction(60)
            raise AclRefusedError(f"{self.flow.name} task {self.task_id}: {refused}", refused) from exc
        if error.fatal() or not error.txn_requires_abort():
            raise ReplicationError(f"{self.flow.name} task {self.task_id}: transaction failed: {error.str()}") from exc
        log.warning("%s task %d: aborting transaction: %s", self.flow.name, self.task_id, error.str())
        with self.producer.purging():
            self.producer.client.abort_transaction(60)
        rewind = []
        for key, state in self.states.items():
            state.acked_next = state.stored_next
            state.inflight, state.pending_next = 0, None
            rewind.append(TopicPartition(key[0], key[1], state.stored_next))
        self.consumed_next.clear()
        self.producer.forget_outstanding()
        self.consumer.assign(rewind)
        self.listener.aborted()

    def fatal_detail(self) -> str | None:
        """Why the producer failed fatally, e.g. fenced by a newer instance of this task, or None if not known."""
        detail = self.producer.fatal_detail()
        if detail is None and self.flow.exactly_once:
            try:  # a fenced transactional producer tells why only through its transaction API
                self.producer.client.abort_transaction(1)
            except KafkaException as exc:
                self.producer.fail(f"transaction: {exc.args[0].str()}")
        return self.producer.failure

    # -- both ----------------------------------------------------------------------------------------
    def _due_positions(self) -> DuePositions:
        due = []
        exactly_once = self.flow.exactly_once  # its downstream offsets include commit markers: resume needs none
        for state in self.sweep.pick(self.clock(), self._swept):
            key = (state.topic, state.partition)
            state.hw = self.consumer.get_watermark_offsets(self._sources[state], cached=True)[1]
            # Exactly once, acked_next already covers the open transaction, whose commit may block up to 60 s (the
            # target's leader or coordinator moving) with none of its records visible: until it commits, the lag
            # counts from the last committed position.
            self._set_lag(state, max(state.hw - (state.stored_next if exactly_once else state.acked_next), 0))
            if state.acked_next != state.stored_next:
                down = None if exactly_once else state.downstream_next()
                remote = None if down is None else state.remote_topic
                due.append((key, positions.Position(state.acked_next, max(state.hw, state.acked_next), down, remote)))
        # A partition whose runs still await their acknowledgement moves again: it stays for the next store.
        self.sweep.moved = {state for state in self.sweep.moved if state.acknowledging}
        return due

    def _swept(self) -> list[PartitionState]:
        """A sweep's partitions: all of them once per SETTLED_SWEEP_SECONDS, else the unsettled ones.

        Reading a partition's cached end offset costs about 3 us (librdkafka looks its topic up in a list): 2,500
        partitions per task every 5 s were most of an idle task's Python (`bench.worker_idle --py-spy`). A settled
        partition's end offset moves without a consumed record (which marks it moved) only when the source appends
        transaction markers alone, so its lag and its offset syncs' frontier follow such an abort within 30 s.
        """
        now = self.clock()
        if now >= self._settled_due:
            self._settled_due = now + SETTLED_SWEEP_SECONDS
            return list(self.states.values())
        return [
            state
            for state in self.states.values()
            if state.hw < 0 or state.hw > state.acked_next or state.acked_next != state.stored_next
        ]

    def _set_lag(self, state: PartitionState, lag: int) -> None:
        if state.hw >= 0 and lag != state.lag:  # an unchanged lag (every idle partition) costs no registry call
            self.metrics.set_lag(self.flow.name, state.topic, state.partition, lag)
            state.lag = lag

    def _stored_positions(self, due: DuePositions) -> None:
        if due:
            self.faults.clear()  # records are flowing end to end again
        for key, position in due:
            self.states[key].stored_next = position.next_offset
            self.metrics.set_position(self.flow.name, key[0], key[1], position.next_offset)
        self.listener.committed()
