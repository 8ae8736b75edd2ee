"""Exactly once, when a transaction commits: as soon as the task has read everything the source had, or at
`transaction.boundary.interval.ms` under a backlog (issue 15 item 2: latency near at least once's, batching kept)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from confluent_kafka import TopicPartition

from replication.metrics.registry import MetricsRegistry
from replication.task.committing import PositionCommitter
from replication.task.faults import FaultReporter
from replication.task.partitionstate import PartitionState, TaskListeners
from tests.replication.fakes import flow


class _Transactions:
    def __init__(self) -> None:
        self.commits = 0

    def produce(self, *args: Any, **kwargs: Any) -> None:
        pass

    def commit_transaction(self, timeout: float) -> None:
        self.commits += 1


class _Consumer:
    def __init__(self, high: int) -> None:
        self.high = high

    def get_watermark_offsets(self, tp: TopicPartition, cached: bool = False) -> tuple[int, int]:
        assert cached, "deciding when to commit must not send a request"
        return 0, self.high


def _committer(high: int, read_to: int | None) -> tuple[PositionCommitter, _Transactions]:
    config = flow(exactly_once=True, transaction_boundary_interval_ms=100)
    state = PartitionState("orders", 0, "src.orders", acked_next=0, stored_next=0)
    transactions = _Transactions()
    producer = SimpleNamespace(client=transactions, raise_if_failed=lambda: None)
    metrics = MetricsRegistry()
    committer = PositionCommitter(
        config,
        0,
        metrics,
        producer,  # type: ignore[arg-type]
        _Consumer(high),  # type: ignore[arg-type]
        FaultReporter(config, 0, metrics),
        "positions",
        TaskListeners([]),
    )
    committer.track(state)
    if read_to is not None:
        committer.consumed_next[state] = read_to
    committer.txn_started = 10.0
    return committer, transactions


def test_a_transaction_that_holds_everything_the_source_had_commits_at_once() -> None:
    committer, transactions = _committer(high=500, read_to=500)
    committer.commit_when_due(10.001, full_batch=False)
    assert transactions.commits == 1 and committer.txn_started is None
    assert committer.states[("orders", 0)].stored_next == 500


def test_under_a_backlog_a_transaction_collects_records_for_the_whole_interval() -> None:
    committer, transactions = _committer(high=900, read_to=500)  # the source has more than was read
    committer.commit_when_due(10.05, full_batch=False)
    committer.commit_when_due(10.05, full_batch=True)
    assert transactions.commits == 0
    committer.commit_when_due(10.11, full_batch=True)
    assert transactions.commits == 1


def test_a_full_batch_never_commits_early_and_an_empty_transaction_waits_for_the_interval() -> None:
    committer, transactions = _committer(high=500, read_to=500)
    committer.commit_when_due(10.01, full_batch=True)  # the consumer may hold more than the last fetch said
    assert transactions.commits == 0
    empty, empty_transactions = _committer(high=500, read_to=None)
    empty.commit_when_due(10.01, full_batch=False)
    assert empty_transactions.commits == 0
