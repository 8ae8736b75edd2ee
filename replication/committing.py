"""PositionCommitter: makes a task's acknowledged positions durable, at least once or exactly once."""

from __future__ import annotations

import logging

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from replication import positions
from replication.config import FlowConfig
from replication.errors import ReplicationError
from replication.faults import FaultReporter
from replication.metrics import MetricsRegistry
from replication.producing import BatchProducer
from replication.runs import PartitionState, Run, TaskListener

log = logging.getLogger("replication.engine")  # the task's own log, as operators know it
DuePositions = list[tuple[positions.TopicPartitionKey, positions.Position]]


class PositionCommitter:
    """Writes a task's positions to its positions topic and tells the task's listeners what became durable.

    At least once, a position is written after the target acknowledged every record before it. Exactly once,
    positions are written in the producer's open transaction and commit with its records, or neither does.
    `states` and `listeners` are the task's own, shared, not copied.
    """

    def __init__(
        self,
        flow: FlowConfig,
        task_id: int,
        metrics: MetricsRegistry,
        states: dict[positions.TopicPartitionKey, PartitionState],
        listeners: list[TaskListener],
        producer: BatchProducer,
        consumer: Consumer,
        faults: FaultReporter,
        positions_topic: str,
    ) -> None:
        self.flow = flow
        self.task_id = task_id
        self.metrics = metrics
        self.states = states
        self.listeners = listeners
        self.producer = producer
        self.consumer = consumer
        self.faults = faults
        self.positions_topic = positions_topic
        self.txn_started: float | None = None  # when the open transaction began (exactly once)

    def run_acked(self, run: Run, downstream: int) -> None:
        for listener in self.listeners:
            listener.run_acked(run, downstream)

    def store_positions(self) -> None:
        """At least once: write every position that moved since the last store."""
        self.producer.raise_if_failed()
        due = self._due_positions()
        positions.write(self.producer.producer, self.positions_topic, due)
        self._stored_positions(due)

    def store_start_positions(
        self, keys: list[positions.TopicPartitionKey], stored: dict[positions.TopicPartitionKey, positions.Position]
    ) -> None:
        """At least once: make new partitions' start durable, with the target's end offset, before any of their
        records is produced, unless that is already what is stored. A task killed before its first periodic store
        then resumes from these and skips what it wrote (replication.resume) instead of copying it again."""
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
        positions.write(self.producer.producer, self.positions_topic, due)
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
            self.producer.producer.begin_transaction()
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
        covered = self.producer.consumed_next
        return bool(covered) and all(
            self.consumer.get_watermark_offsets(TopicPartition(state.topic, state.partition), cached=True)[1] <= next_
            for state, next_ in covered.items()
        )

    def commit_transaction(self) -> None:
        """Exactly-once: records and their positions commit together, or neither does."""
        if self.txn_started is None:
            return
        self.producer.raise_if_failed()
        for state, next_offset in self.producer.consumed_next.items():  # the transaction covers what it produced
            state.acked_next = max(state.acked_next, next_offset)
        self.producer.consumed_next.clear()
        due = self._due_positions()
        positions.write(self.producer.producer, self.positions_topic, due)
        try:
            self.producer.producer.commit_transaction(60)
        except KafkaException as exc:
            self._transaction_failed(exc)
            return
        finally:
            self.txn_started = None
        self._stored_positions(due)

    def _transaction_failed(self, exc: KafkaException) -> None:
        error: KafkaError = exc.args[0]
        if error.fatal() or not error.txn_requires_abort():
            raise ReplicationError(f"{self.flow.name} task {self.task_id}: transaction failed: {error.str()}") from exc
        log.warning("%s task %d: aborting transaction: %s", self.flow.name, self.task_id, error.str())
        self.producer.aborting = True
        try:
            self.producer.producer.abort_transaction(60)
        finally:
            self.producer.aborting = False
        rewind = []
        for key, state in self.states.items():
            state.acked_next = state.stored_next
            state.inflight, state.pending_next = 0, None
            rewind.append(TopicPartition(key[0], key[1], state.stored_next))
        self.producer.consumed_next.clear()
        self.producer.forget_outstanding()
        self.consumer.assign(rewind)
        for listener in self.listeners:
            listener.aborted()

    # -- both ----------------------------------------------------------------------------------------
    def _due_positions(self) -> DuePositions:
        due = []
        exactly_once = self.flow.exactly_once  # its downstream offsets include commit markers: resume needs none
        for key, state in self.states.items():
            state.hw = self.consumer.get_watermark_offsets(TopicPartition(*key), cached=True)[1]
            if state.hw >= 0:
                self.metrics.set_lag(self.flow.name, key[0], key[1], max(state.hw - state.acked_next, 0))
            if state.acked_next != state.stored_next:
                down = None if exactly_once else state.downstream_next()
                remote = None if down is None else state.remote_topic
                due.append((key, positions.Position(state.acked_next, max(state.hw, state.acked_next), down, remote)))
        return due

    def _stored_positions(self, due: DuePositions) -> None:
        if due:
            self.faults.clear()  # records are flowing end to end again
        for key, position in due:
            self.states[key].stored_next = position.next_offset
            self.metrics.set_position(self.flow.name, key[0], key[1], position.next_offset)
        for listener in self.listeners:
            listener.committed()
