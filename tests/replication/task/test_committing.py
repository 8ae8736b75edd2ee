"""Exactly once, when a transaction commits: as soon as the task has read everything the source had, or at
`transaction.boundary.interval.ms` under a backlog (so latency stays near at least once's and batching is kept)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from confluent_kafka import TopicPartition

from replication.metrics.registry import MetricsRegistry
from replication.offsets.partitionstate import PartitionState, TaskListeners
from replication.task.committing import PositionCommitter
from replication.task.context import TaskContext
from tests.replication.fakes import FakeClients, flow


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
        TaskContext.create(config, 0, metrics, FakeClients()),  # type: ignore[arg-type]
        producer,  # type: ignore[arg-type]
        _Consumer(high),  # type: ignore[arg-type]
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


class _Producer:
    """What store_positions needs of a BatchProducer: the positions written, and a batch's consumed partitions."""

    def __init__(self) -> None:
        self.client = self
        self.written: list[bytes] = []  # position record keys
        self.consumed: dict[PartitionState, int] = {}

    def produce(self, topic: str, value: bytes, key: bytes, **kwargs: Any) -> None:
        self.written.append(key)

    def raise_if_failed(self) -> None:
        pass

    def replicate(self, msgs: list[Any], states: Any, handler: Any, on_error: Any) -> dict[PartitionState, int]:
        return self.consumed


class _Watermarks:
    def __init__(self) -> None:
        self.looked_up: list[tuple[str, int]] = []

    def get_watermark_offsets(self, tp: TopicPartition, cached: bool = False) -> tuple[int, int]:
        self.looked_up.append((tp.topic, tp.partition))
        return 0, 100


def _sweeping(
    metrics: MetricsRegistry, partitions: int
) -> tuple[PositionCommitter, _Producer, _Watermarks, list[float], list[PartitionState]]:
    """An at-least-once committer of `partitions` partitions of `orders`, on a clock the test moves (now[0])."""
    config = flow()
    producer, consumer, now = _Producer(), _Watermarks(), [0.0]
    committer = PositionCommitter(
        TaskContext.create(config, 0, metrics, FakeClients()),  # type: ignore[arg-type]
        producer,  # type: ignore[arg-type]
        consumer,  # type: ignore[arg-type]
        TaskListeners([]),
    )
    committer.clock = lambda: now[0]
    states = [PartitionState("orders", p, "src.orders", acked_next=0, stored_next=0) for p in range(partitions)]
    for state in states:
        committer.track(state)
    return committer, producer, consumer, now, states


def test_a_store_between_sweeps_looks_only_at_partitions_consumed_from_until_they_are_acknowledged() -> None:
    config = flow()
    metrics = MetricsRegistry()
    committer, producer, consumer, now, states = _sweeping(metrics, 1000)
    committer.store_positions()  # the first store sweeps every partition
    assert len(consumer.looked_up) == 1000
    assert metrics.snapshot()["flows"][config.name]["partitions"]["orders-999"]["replication-record-lag"] == 100

    consumer.looked_up.clear()
    busy = states[7]
    producer.consumed = {busy: 50}
    committer.replicate([], None, lambda msg: None)
    busy.inflight = 1  # produced, not acknowledged yet
    now[0] = 1.0
    committer.store_positions()
    assert consumer.looked_up == [("orders", 7)] and committer.states[("orders", 7)].stored_next == 0
    producer.written.clear()

    consumer.looked_up.clear()
    busy.run_acked(50, downstream=49)
    now[0] = 2.0
    committer.store_positions()  # acknowledged since the last store: its position is written now, not at a sweep
    assert consumer.looked_up == [("orders", 7)] and busy.stored_next == 50
    assert len(producer.written) == 1  # that one position, no other

    consumer.looked_up.clear()
    now[0] = 3.0
    committer.store_positions()  # nothing moved
    assert consumer.looked_up == []

    now[0] = 5.0
    committer.store_positions()  # the sweep: every partition's lag again
    assert len(consumer.looked_up) == 1000


class _CountingRegistry(MetricsRegistry):
    def __init__(self) -> None:
        super().__init__()
        self.lags_set: list[tuple[str, int, int]] = []

    def set_lag(self, flow: str, topic: str, partition: int, records: int) -> None:
        self.lags_set.append((topic, partition, records))
        super().set_lag(flow, topic, partition, records)


def test_a_sweep_gives_the_metrics_only_the_lags_that_changed() -> None:
    """An idle partition's lag is unchanged at every sweep: 10,000 of them cost a registry call (its lock and
    lookups) each, every 5 s, in the control plane's worker."""
    config = flow()
    metrics = _CountingRegistry()
    committer, _, consumer, now, states = _sweeping(metrics, 100)
    committer.store_positions()
    assert len(metrics.lags_set) == 100  # the first sweep gives every lag

    metrics.lags_set.clear()
    states[3].acked_next = 40  # 60 behind now
    now[0] = 5.0
    committer.store_positions()  # the next sweep: one lag changed
    assert len(consumer.looked_up) == 200
    assert metrics.lags_set == [("orders", 3, 60)]
    assert metrics.snapshot()["flows"][config.name]["partitions"]["orders-3"]["replication-record-lag"] == 60
    assert metrics.snapshot()["flows"][config.name]["partitions"]["orders-4"]["replication-record-lag"] == 100


def test_a_sweep_reads_settled_partitions_end_offsets_only_every_30_s() -> None:
    """A partition stored at the source end offset it last saw is settled: the 5 s sweep skips it, and reads it
    again at the 30 s one, so a marker-only append (an aborted transaction) still shows as lag there. At 2,500
    idle partitions per task the cached end-offset reads were most of an idle task's Python."""
    config = flow()
    metrics = MetricsRegistry()
    committer, _, consumer, now, states = _sweeping(metrics, 100)
    for state in states:
        state.acked_next = state.stored_next = 100  # at the end offset the fake reports
    states[5].acked_next = states[5].stored_next = 90  # 10 behind: unsettled
    committer.store_positions()  # the first store sweeps every partition
    assert len(consumer.looked_up) == 100

    for t in (5.0, 10.0, 25.0):
        consumer.looked_up.clear()
        now[0] = t
        committer.store_positions()
        assert consumer.looked_up == [("orders", 5)], t  # only the unsettled one

    states[8].acked_next = states[8].stored_next = 97  # as if the end offset moved 3 past it without a record
    consumer.looked_up.clear()
    now[0] = 30.0
    committer.store_positions()  # the settled sweep
    assert len(consumer.looked_up) == 100
    lags = metrics.snapshot()["flows"][config.name]["partitions"]
    assert lags["orders-8"]["replication-record-lag"] == 3 and lags["orders-9"]["replication-record-lag"] == 0

    consumer.looked_up.clear()
    now[0] = 35.0
    committer.store_positions()  # now unsettled too: every 5 s until it settles
    assert sorted(consumer.looked_up) == [("orders", 5), ("orders", 8)]


def test_exactly_once_the_lag_counts_a_transactions_records_until_it_commits() -> None:
    """A commit blocks while the target's partition leader or transaction coordinator moves (up to 60 s); until it
    returns, read_committed consumers of the target see none of its records, so the lag must still count them."""
    committer, transactions = _committer(high=500, read_to=500)
    state = committer.states[("orders", 0)]
    committer.metrics.set_lag(committer.flow.name, "orders", 0, 0)  # the last sweep's: caught up, before these 500
    state.lag = 0
    seen_during_commit: list[int | None] = []

    def commit(timeout: float) -> None:
        partitions = committer.metrics.snapshot()["flows"][committer.flow.name]["partitions"]
        seen_during_commit.append(partitions["orders-0"]["replication-record-lag"])
        transactions.commits += 1
        consumer.high = 530  # the source moved on while the commit blocked

    consumer = committer.consumer
    assert isinstance(consumer, _Consumer)

    transactions.commit_transaction = commit  # type: ignore[method-assign]
    committer.commit_when_due(10.001, full_batch=False)
    assert seen_during_commit == [500], "the lag fell before the records were committed"
    lag = committer.metrics.snapshot()["flows"][committer.flow.name]["partitions"]["orders-0"]["replication-record-lag"]
    assert (transactions.commits, lag) == (1, 30), "after the commit: what the source got meanwhile"
