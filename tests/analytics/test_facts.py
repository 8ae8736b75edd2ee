"""The facts writer on the engine side: no Spark, one row per acknowledged run, written off the hot path."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow.dataset as ds
import pytest

from replication.facts.heartbeats import arrival_path
from replication.facts.lake import prune, write_rows
from replication.facts.writer import FACTS_SCHEMA, FactsWriter, facts_sink, facts_writer, hop_path
from replication.metrics.registry import MetricsRegistry
from replication.mm2.policy import DefaultReplicationPolicy
from replication.offsets.partitionstate import PartitionState, Run
from replication.task.context import TaskContext
from replication.task.producing import BatchProducer
from replication.task.replicationtask import ReplicationTask
from tests.analytics.factgen import T0, fact
from tests.replication.fakes import FakeClients, FakeMessage, flow

REPO = Path(__file__).resolve().parents[2]
HOUR = 3_600_000


class ListSink:
    def __init__(self) -> None:
        self.rows: list[tuple[Any, ...]] = []

    def add(self, row: tuple[Any, ...]) -> None:
        self.rows.append(row)

    def extend(self, rows: list[tuple[Any, ...]]) -> None:
        self.rows.extend(rows)


def _acked_runs(batches: list[list[FakeMessage]], between: Any = None) -> list[tuple[Run, int]]:
    clients = FakeClients()
    acked: list[tuple[Run, int]] = []
    on_run_acked = lambda run, downstream: acked.append((run, downstream))  # noqa: E731
    producer = BatchProducer(TaskContext.create(flow(), 0, MetricsRegistry(), clients), on_run_acked)  # type: ignore[arg-type]
    state = PartitionState("orders", 0, "us-west.orders", acked_next=0, stored_next=0)
    for batch in batches:
        producer.replicate(batch, {("orders", 0): state}, None, lambda m: None)  # type: ignore[arg-type]
        clients.producer_instance.deliver_all()
        if between is not None:
            between(state)
    return acked


def test_runs_record_where_the_consumer_read_from_and_their_first_timestamp() -> None:
    batches = [
        [FakeMessage("orders", 0, o, _timestamp=1000 + o) for o in range(5)],
        [FakeMessage("orders", 0, o, _timestamp=1000 + o) for o in (7, 8)],  # 5 and 6 were transaction markers
    ]
    (first, _), (second, _) = _acked_runs(batches)
    assert (first.fetched_from, first.first_offset, first.first_timestamp, first.last_timestamp) == (0, 0, 1000, 1004)
    assert (second.fetched_from, second.first_offset, second.first_timestamp) == (5, 7, 1007)


def test_a_forward_seek_starts_a_new_stretch_and_a_rewind_reads_back_from_the_run() -> None:
    moves = iter([20, 3])  # the engine seeks past lost records, then an aborted transaction rewinds

    def engine_moves(state: PartitionState) -> None:
        state.acked_next = next(moves, state.acked_next)

    batches = [[FakeMessage("orders", 0, 0)], [FakeMessage("orders", 0, 20)], [FakeMessage("orders", 0, 3)]]
    runs = _acked_runs(batches, engine_moves)
    writer = FactsWriter(flow(), 0, ListSink())  # type: ignore[arg-type]
    facts = [writer.fact(run, downstream, 0) for run, downstream in runs]
    assert [(f[7], f[8]) for f in facts] == [(0, 0), (20, 20), (3, 3)]  # (fetched_from, first_offset)


def test_facts_go_to_the_sink_on_ack_at_least_once_and_on_commit_exactly_once() -> None:
    (run, downstream), *_ = _acked_runs([[FakeMessage("orders", 0, o) for o in range(3)]])
    sink = ListSink()
    writer = FactsWriter(flow(), 0, sink)  # type: ignore[arg-type]
    writer.run_acked(run, downstream)
    assert len(sink.rows) == 1
    row = dict(zip(FACTS_SCHEMA.names, sink.rows[0], strict=True))
    assert {
        k: row[k]
        for k in (
            "source",
            "target",
            "topic",
            "remote_topic",
            "path",
            "first_offset",
            "last_offset",
            "downstream_offset",
            "count",
        )
    } == {
        "source": "us-west",
        "target": "us-east",
        "topic": "orders",
        "remote_topic": "us-west.orders",
        "path": "us-west->us-east",
        "first_offset": 0,
        "last_offset": 2,
        "downstream_offset": 2,
        "count": 3,
    }
    eos_sink = ListSink()
    eos = FactsWriter(flow(exactly_once=True), 0, eos_sink)  # type: ignore[arg-type]
    eos.run_acked(run, downstream)
    eos.aborted()
    eos.committed()
    assert eos_sink.rows == []
    eos.run_acked(run, downstream)
    eos.committed()
    assert len(eos_sink.rows) == 1


def test_the_sink_writes_one_parquet_file_per_hour_from_its_thread(tmp_path: Path) -> None:
    lake = str(tmp_path / "lake")
    sink = facts_sink(lake, "a->b", interval=3600)
    for i in range(10):
        sink.add(fact("a->b", "t", 0, i, ts=T0, acked=T0 + (i % 2) * HOUR))
    sink.close()
    files = sorted(p.relative_to(tmp_path / "lake") for p in Path(lake).rglob("*") if p.is_file())
    assert [str(f.parent) for f in files] == [
        "facts/date=2027-01-15/hour=08/flow=a->b",
        "facts/date=2027-01-15/hour=09/flow=a->b",
    ]
    table = ds.dataset(f"{lake}/facts", format="parquet", partitioning="hive").to_table()
    assert sorted(table.column("first_offset").to_pylist()) == list(range(10))


def test_a_failed_write_keeps_the_rows_for_the_next_flush(tmp_path: Path) -> None:
    blocker = tmp_path / "lake"
    blocker.write_text("a file where the lake directory should be")
    sink = facts_sink(str(blocker), "a->b", interval=3600)
    sink.add(fact("a->b", "t", 0, 0, ts=T0, acked=T0))
    sink.flush()
    assert sink.files_written == 0
    blocker.unlink()
    sink.close()
    assert sink.files_written == 1 and sink.dropped == 0


def test_prune_removes_hour_partitions_older_than_the_cutoff(tmp_path: Path) -> None:
    lake = str(tmp_path / "lake")
    for hour in range(3):  # 08, 09, 10 on 2027-01-15
        write_rows(
            lake,
            "facts",
            FACTS_SCHEMA,
            [fact("a->b", "t", 0, 0, ts=T0, acked=T0 + hour * HOUR)],
            "acked_ms",
            ("flow", "a->b"),
        )
    assert prune(lake, datetime(2027, 1, 15, 10, tzinfo=UTC)) == 2
    assert [p.name for p in Path(lake, "facts", "date=2027-01-15").iterdir()] == ["hour=10"]
    assert prune(lake, datetime(2027, 1, 16, tzinfo=UTC)) == 1
    assert list(Path(lake, "facts").iterdir()) == []


def test_a_writer_registers_the_flow_and_a_task_takes_it_as_a_listener(tmp_path: Path) -> None:
    config = flow(emit_heartbeats_interval_seconds=2.0)
    writer = facts_writer(config, 0, str(tmp_path))
    writer.close()
    task = ReplicationTask(config, clients=FakeClients(), listeners=[writer])  # type: ignore[arg-type]
    assert task.listeners == [writer]
    registered = json.loads(Path(tmp_path, "flows", "us-west__us-east.json").read_text())
    assert registered == {
        "flow": "us-west->us-east",
        "source": "us-west",
        "target": "us-east",
        "heartbeat_interval_s": 2.0,
    }


@pytest.mark.parametrize(
    ("topic", "source", "target", "path"),
    [
        ("orders", "a", "b", ["a", "b"]),
        ("a.orders", "b", "c", ["a", "b", "c"]),
        ("b.a.t", "c", "d", ["a", "b", "c", "d"]),
    ],
)
def test_hop_paths_follow_the_remote_topic_prefixes(topic: str, source: str, target: str, path: list[str]) -> None:
    assert hop_path(DefaultReplicationPolicy(), topic, source, target) == path


def test_a_heartbeats_path_comes_from_its_topic_name_whatever_its_key() -> None:
    policy = DefaultReplicationPolicy()
    assert arrival_path(policy, "b", "heartbeats") == ["b"]  # written here by a flow into b (MM2): no hop
    assert arrival_path(policy, "b", "a.heartbeats") == ["a", "b"]  # written into a, replicated a -> b
    assert arrival_path(policy, "c", "b.a.heartbeats") == ["a", "b", "c"]
    assert arrival_path(DefaultReplicationPolicy("_"), "c", "b_a_heartbeats") == ["a", "b", "c"]


def test_the_engine_side_never_loads_spark() -> None:
    script = (
        "import sys, replication.task.replicationtask, replication.facts.writer\n"
        "import replication.facts.heartbeats, replication.facts.lake\n"
        "assert not [m for m in sys.modules if m.startswith('pyspark')], 'pyspark imported'\n"
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
