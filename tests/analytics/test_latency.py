"""Latency on a generated 3-hop chain A->B->C->D with injected delays: every percentile is known in advance."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from replication.analytics.jobs import run_job
from replication.analytics.latency import series_minutes
from tests.analytics.factgen import T0, arrival, fact, write_arrivals, write_facts
from tests.analytics.frames import assert_frame_equal

pytestmark = pytest.mark.spark
N = 100


def _delay(i: int) -> int:
    """Injected end-to-end delay of record i at D: 50..144 ms, then a slow tail of 1145..1149 ms for i >= 95."""
    return 50 + i + (1000 if i >= 95 else 0)


def _chain_lake(lake: str) -> None:
    """Topic t created at A, replicated A->B (as A.t), B->C (B.A.t), C->D; one fact per record, 500 ms apart."""
    rows = []
    for i in range(N):
        ts = T0 + 500 * i
        rows.append(fact("A->B", "t", 0, i, ts=ts, consumed=ts + 5, acked=ts + 10, path=["A", "B"]))
        rows.append(fact("B->C", "A.t", 0, i, ts=ts, consumed=ts + 20, acked=ts + 30, path=["A", "B", "C"]))
        rows.append(
            fact("C->D", "B.A.t", 0, i, ts=ts, consumed=ts + 40, acked=ts + _delay(i), path=["A", "B", "C", "D"])
        )
    write_facts(lake, rows)
    beats = [arrival("D", ["A", "B", "C", "D"], T0 + 1000 * k, T0 + 1000 * k + 40 + k, k) for k in range(20)]
    # A's heartbeats topic also held flow X->A's, hours old, which A->B->C->D copied along: no latency of this path
    backlog = [arrival("D", ["A", "B", "C", "D"], T0 - 3_600_000, T0 + k, 20 + k, source="X") for k in range(5)]
    write_arrivals(lake, beats + backlog)  # heartbeat latencies 40..59 ms


def _stats(prefix: str, p50: int, p95: int, p99: int, top: int) -> dict[str, int]:
    return {f"{prefix}_p50": p50, f"{prefix}_p95": p95, f"{prefix}_p99": p99, f"{prefix}_max": top}


def _partition_row(flow: str, topic: str, latency: tuple[int, ...], age: int) -> dict[str, object]:
    return {
        "flow": flow,
        "topic": topic,
        "partition": 0,
        "facts": N,
        "records": N,
        "bytes": 100 * N,
        **_stats("replication_latency_ms", *latency),
        **_stats("record_age_ms", age, age, age, age),
    }


EXPECTED_PARTITIONS = [
    _partition_row("A->B", "t", (10, 10, 10, 10), 5),
    _partition_row("B->C", "A.t", (30, 30, 30, 30), 20),
    # 100 values 50..144, 1145..1149: the 50th is 99, the 95th 144, the 99th 1148
    _partition_row("C->D", "B.A.t", (99, 144, 1148, 1149), 40),
]
EXPECTED_PATHS = [
    {
        "derived_from": "records",
        "origin": "A",
        "destination": "B",
        "hops": 1,
        "path": "A->B",
        "samples": N,
        **_stats("latency_ms", 10, 10, 10, 10),
    },
    {
        "derived_from": "records",
        "origin": "A",
        "destination": "C",
        "hops": 2,
        "path": "A->B->C",
        "samples": N,
        **_stats("latency_ms", 30, 30, 30, 30),
    },
    {
        "derived_from": "records",
        "origin": "A",
        "destination": "D",
        "hops": 3,
        "path": "A->B->C->D",
        "samples": N,
        **_stats("latency_ms", 99, 144, 1148, 1149),
    },
    # 20 values 40..59: the 10th is 49, the 19th 58, the 20th (ceil(0.99 * 20)) 59
    {
        "derived_from": "heartbeats",
        "origin": "A",
        "destination": "D",
        "hops": 3,
        "path": "A->B->C->D",
        "samples": 20,
        **_stats("latency_ms", 49, 58, 59, 59),
    },
]


@pytest.fixture(scope="module")
def chain(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, object]]:
    base = tmp_path_factory.mktemp("chain")
    lake, out = str(base / "lake"), str(base / "out")
    _chain_lake(lake)
    return out, run_job("latency", lake, out, spark=spark)


def test_percentiles_per_partition_over_the_window_are_exact(spark: SparkSession, chain: tuple[str, dict]) -> None:
    out, _ = chain
    assert_frame_equal(spark.read.parquet(f"{out}/by_partition"), EXPECTED_PARTITIONS)


def test_per_minute_rows_carry_the_same_figures_within_one_minute(spark: SparkSession, chain: tuple[str, dict]) -> None:
    out, _ = chain
    by_minute = spark.read.parquet(f"{out}/by_minute").selectExpr("*", "unix_millis(minute) as minute_ms")
    assert_frame_equal(by_minute, [{**row, "minute_ms": T0} for row in EXPECTED_PARTITIONS])


def test_end_to_end_latency_of_the_3_hop_chain_from_records_and_heartbeats(
    spark: SparkSession, chain: tuple[str, dict]
) -> None:
    out, summary = chain
    assert_frame_equal(spark.read.parquet(f"{out}/end_to_end"), EXPECTED_PATHS)
    a_to_d = [p for p in summary["end_to_end"] if p["path"] == "A->B->C->D" and p["derived_from"] == "records"]
    assert a_to_d[0]["latency_ms_p99"] == 1148
    assert summary["facts"] == 3 * N and summary["records"] == 3 * N
    assert Path(out, "summary.json").is_file()


def test_a_wrong_p99_fails_the_comparison(spark: SparkSession, chain: tuple[str, dict]) -> None:
    out, _ = chain
    wrong = [{**row, "latency_ms_p99": 1149} if row["hops"] == 3 else row for row in EXPECTED_PATHS]
    with pytest.raises(AssertionError):
        assert_frame_equal(spark.read.parquet(f"{out}/end_to_end"), wrong)


def test_the_window_selects_facts_by_ack_time(spark: SparkSession, chain: tuple[str, dict], tmp_path: Path) -> None:
    from datetime import UTC, datetime

    lake = str(Path(chain[0]).parent / "lake")
    until = datetime.fromtimestamp((T0 + 500 * 49 + 60) / 1000, UTC)  # record 49 is acked by B and C, not D
    summary = run_job("latency", lake, str(tmp_path / "out"), until=until, spark=spark)
    assert {f["flow"]: f["facts"] for f in summary["flows"]} == {"A->B": 50, "B->C": 50, "C->D": 49}


def test_the_summary_has_each_flows_latency_over_time_per_path(chain: tuple[str, dict]) -> None:
    """Every fact was acknowledged within one minute: one bucket per flow and path, with the partition's figures."""
    summary = chain[1]
    at = "2027-01-15T08:00:00Z"
    assert summary["series_minutes"] == 1
    assert summary["series"] == [
        {"flow": "A->B", "path": "A->B", "at": at, "facts": N, **_stats("replication_latency_ms", 10, 10, 10, 10)},
        {"flow": "B->C", "path": "A->B->C", "at": at, "facts": N, **_stats("replication_latency_ms", 30, 30, 30, 30)},
        {
            "flow": "C->D",
            "path": "A->B->C->D",
            "at": at,
            "facts": N,
            **_stats("replication_latency_ms", 99, 144, 1148, 1149),
        },
    ]


def test_the_series_buckets_keep_a_window_to_at_most_120_points() -> None:
    assert [series_minutes(m) for m in (0, 60, 120, 121, 360, 1440)] == [1, 1, 1, 2, 3, 12]
