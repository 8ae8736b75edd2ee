"""Replication facts: one row per acknowledged run, written to the facts lake off the hot path.

Granularity, honestly: the hot path sees records only as *runs* (consecutive records of one partition produced
together, one acknowledgement each), and any per-record Python work costs 25-35 % of the loop at 100 B. So a
fact describes the run's last record in full (upstream and downstream offset, record timestamp, consume and ack
time) and stands for `count` records: the run's upstream offsets `first_offset..last_offset` and its bytes. The
sampling rate is therefore one record per run, recorded per fact as `count`. Latency percentiles are over these
sampled records; the audit counts every record, because the offsets of the whole run are known.

`fetched_from` is where the consumer stood before the run: offsets in `[fetched_from, first_offset)` were skipped
by the consumer (transaction markers, compaction, dropped records), so a gap there is no loss.
No Spark here: the engine process imports this module.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from replication.config import FlowConfig
from replication.facts.lake import LakeSink, Row, register_flow
from replication.mm2.policy import ReplicationPolicy, source_chain
from replication.offsets.partitionstate import Run

FACTS_TABLE = "facts"
FACTS_SCHEMA = pa.schema(
    [
        ("source", pa.string()),  # source cluster alias
        ("target", pa.string()),  # target cluster alias
        ("task", pa.int32()),
        ("topic", pa.string()),  # source topic
        ("partition", pa.int32()),
        ("remote_topic", pa.string()),  # topic in the target
        ("path", pa.string()),  # clusters the records passed through, origin first, target last: "a->b->c"
        ("fetched_from", pa.int64()),  # upstream offset the consumer read from before this run
        ("first_offset", pa.int64()),  # upstream offset of the run's first record
        ("last_offset", pa.int64()),  # upstream offset of the run's last record
        ("downstream_offset", pa.int64()),  # downstream offset of the run's last record
        ("count", pa.int32()),  # records replicated by the run: how many records this fact stands for
        ("bytes", pa.int64()),
        ("first_timestamp", pa.int64()),  # record timestamp (ms) of the first record
        ("timestamp", pa.int64()),  # record timestamp (ms) of the last record
        ("consumed_ms", pa.int64()),  # when the batch holding the run was consumed from the source
        ("acked_ms", pa.int64()),  # when the target acknowledged the run
    ]
)
PARTITION_COLUMNS = ("date", "hour", "flow")


def hop_path(policy: ReplicationPolicy, topic: str, source: str, target: str) -> list[str]:
    """Clusters a record of `topic` passed through on its way into target, origin first: `a.t` via b->c is a,b,c."""
    path = list(reversed(source_chain(policy, topic)))
    path += [source, target]
    return [alias for i, alias in enumerate(path) if i == 0 or alias != path[i - 1]]


class FactsWriter:
    """A TaskListener that turns acknowledged runs into fact rows for a LakeSink.

    At least once, an acknowledged run is in the target for good, so its fact goes straight to the sink. Exactly
    once, the run is real only if its transaction commits: facts wait for `committed()` and `aborted()` drops them.
    """

    def __init__(self, flow: FlowConfig, task_id: int, sink: LakeSink, clock: Callable[[], float] = time.time) -> None:
        self.source, self.target, self.task_id = flow.source.alias, flow.target.alias, task_id
        self.policy = flow.policy()
        self.exactly_once = flow.exactly_once
        self.sink = sink
        self.clock = clock
        self._pending: list[Row] = []
        self._paths: dict[str, str] = {}

    def run_acked(self, run: Run, downstream: int) -> None:
        row = self.fact(run, downstream, int(self.clock() * 1000))
        if self.exactly_once:
            self._pending.append(row)
        else:
            self.sink.add(row)

    def committed(self) -> None:
        if self._pending:
            self.sink.extend(self._pending)
            self._pending = []

    def aborted(self) -> None:
        self._pending = []

    def fact(self, run: Run, downstream: int, acked_ms: int) -> Row:
        state = run.state
        path = self._paths.get(state.topic)
        if path is None:
            path = self._paths[state.topic] = "->".join(hop_path(self.policy, state.topic, self.source, self.target))
        fetched_from = run.first_offset if run.fetched_from < 0 else min(run.fetched_from, run.first_offset)
        first_ts = run.last_timestamp if run.first_timestamp < 0 else run.first_timestamp
        return (
            self.source,
            self.target,
            self.task_id,
            state.topic,
            state.partition,
            state.remote_topic,
            path,
            fetched_from,
            run.first_offset,
            run.last_offset,
            downstream,
            run.count,
            run.nbytes,
            first_ts,
            run.last_timestamp,
            int(run.consumed_ms),
            acked_ms,
        )

    def close(self) -> None:
        """Write what is buffered; call after the task's close() (which commits the last transaction)."""
        self.sink.close()


def facts_sink(lake: str, flow_name: str, **options: Any) -> LakeSink:
    return LakeSink(lake, FACTS_TABLE, FACTS_SCHEMA, "acked_ms", ("flow", flow_name), **options)


def facts_writer(
    flow: FlowConfig,
    task_id: int,
    lake: str,
    interval: float = 5.0,
    max_rows: int = 100_000,
    retention_hours: float | None = None,
) -> FactsWriter:
    """A writer of task `task_id`'s acknowledged runs to the facts lake at `lake`: pass it to the task as one of
    its listeners, and close() it after the task.

    Also registers the flow in the lake, so the topology job knows it is configured.
    """
    register_flow(lake, flow.name, flow.source.alias, flow.target.alias, flow.emit_heartbeats_interval_seconds)
    sink = facts_sink(lake, flow.name, interval=interval, max_rows=max_rows, retention_hours=retention_hours)
    return FactsWriter(flow, task_id, sink)
