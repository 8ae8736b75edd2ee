"""Generated facts and heartbeat arrivals with known answers, written to a lake the way the writers do."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from replication.facts.heartbeats import HEARTBEATS_SCHEMA, HEARTBEATS_TABLE
from replication.facts.lake import Row, write_rows
from replication.facts.writer import FACTS_SCHEMA, FACTS_TABLE

T0 = 1_800_000_000_000  # 2027-01-15T08:00:00Z, on a whole hour


def fact(
    flow: str,
    topic: str,
    partition: int,
    first: int,
    last: int | None = None,
    *,
    ts: int,
    acked: int,
    consumed: int | None = None,
    count: int | None = None,
    fetched_from: int | None = None,
    downstream: int | None = None,
    path: Sequence[str] | None = None,
    nbytes: int = 100,
) -> Row:
    """A fact of flow `a->b`; by default one record (first == last), read right where the last one ended."""
    source, target = flow.split("->")
    last = first if last is None else last
    count = last - first + 1 if count is None else count
    hops = "->".join(path) if path else f"{source}->{target}"
    remote = f"{source}.{topic}"
    return (
        source,
        target,
        0,
        topic,
        partition,
        remote,
        hops,
        first if fetched_from is None else fetched_from,
        first,
        last,
        last if downstream is None else downstream,
        count,
        nbytes,
        ts,
        ts,
        ts if consumed is None else consumed,
        acked,
    )


def arrival(
    cluster: str, path: Sequence[str], ts: int, arrival_ms: int, offset: int = 0, source: str | None = None
) -> tuple[str, Row]:
    """A heartbeat arrival found in cluster, having travelled path (where it was written first, cluster last);
    keyed (path[1], path[0]), the heartbeat the path's first flow writes into its source as MM2 does, unless
    `source` names another flow's source."""
    topic = ".".join([*reversed(path[:-1]), "heartbeats"])
    return cluster, (topic, 0, offset, source or path[1], path[0], list(path), ts, arrival_ms, "log_append")


def write_facts(lake: str, rows: Sequence[Row]) -> None:
    by_flow: dict[str, list[Row]] = {}
    for row in rows:
        by_flow.setdefault(f"{row[0]}->{row[1]}", []).append(row)
    for flow, flow_rows in by_flow.items():
        write_rows(lake, FACTS_TABLE, FACTS_SCHEMA, flow_rows, "acked_ms", ("flow", flow))


def write_arrivals(lake: str, arrivals: Sequence[tuple[str, Row]]) -> None:
    by_cluster: dict[str, list[Row]] = {}
    for cluster, row in arrivals:
        by_cluster.setdefault(cluster, []).append(row)
    for cluster, rows in by_cluster.items():
        write_rows(lake, HEARTBEATS_TABLE, HEARTBEATS_SCHEMA, rows, "arrival_ms", ("cluster", cluster))


def column(rows: Sequence[dict[str, Any]], name: str) -> list[Any]:
    return [r[name] for r in rows]
