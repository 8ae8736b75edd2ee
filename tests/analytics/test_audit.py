"""Audit on generated facts: a window with 7 missing and 3 duplicated records, flagged with their offsets."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from replication.analytics.jobs import run_job
from tests.analytics.factgen import T0, fact, write_facts
from tests.analytics.frames import assert_frame_equal

pytestmark = pytest.mark.spark
MINUTE = 60_000


def _facts() -> list[tuple[object, ...]]:
    rows = []
    # Partition 0, window [T0, T0+1m): offsets 0..99, one fact each, 500 ms apart ...
    for i in range(100):
        if 50 <= i <= 56:
            continue  # ... 50..56 never replicated: the consumer's position jumped from 50 to 57 ...
        ts = T0 + 500 * i
        acked = T0 + 2 * MINUTE + 1 if i >= 90 else ts + 10  # ... 90..99 acknowledged after the window + 1 min ...
        rows.append(fact("a->b", "t", 0, i, ts=ts, acked=acked, downstream=i))
    for i in (80, 81, 82):  # ... and 80..82 replicated a second time (at least once, after a restart).
        rows.append(fact("a->b", "t", 0, i, ts=T0 + 500 * i, acked=T0 + 70_000 + i, downstream=200 + i))
    # Partition 0, window [T0+1m, T0+2m): a run 100..149, then one that starts at 152 after the consumer skipped
    # two transaction markers (150, 151): no loss.
    rows.append(fact("a->b", "t", 0, 100, 149, ts=T0 + MINUTE + 1000, acked=T0 + MINUTE + 1010))
    rows.append(fact("a->b", "t", 0, 152, 199, fetched_from=150, ts=T0 + MINUTE + 2000, acked=T0 + MINUTE + 2010))
    # Partition 1, window [T0, T0+1m): a run 0..99, then a restart from a stored position of 60 replays 60..129.
    rows.append(fact("a->b", "t", 1, 0, 99, ts=T0 + 1000, acked=T0 + 1010))
    rows.append(fact("a->b", "t", 1, 60, 129, ts=T0 + 2000, acked=T0 + 2010))
    return rows


def _window(partition: int, minute: int, **figures: object) -> dict[str, object]:
    return {"flow": "a->b", "topic": "t", "partition": partition, "window_ms": T0 + minute * MINUTE, **figures}


EXPECTED = [
    _window(
        0,
        0,
        source_records=100,
        target_records=96,
        missing=7,
        duplicates=3,
        late=10,
        completeness_pct=93.0,
        loss=True,
        missing_offsets=[{"first": 50, "last": 56}],
        duplicate_offsets=[{"first": 80, "last": 80}, {"first": 81, "last": 81}, {"first": 82, "last": 82}],
    ),
    _window(
        0,
        1,
        source_records=98,
        target_records=98,
        missing=0,
        duplicates=0,
        late=0,
        completeness_pct=100.0,
        loss=False,
        missing_offsets=[],
        duplicate_offsets=[],
    ),
    _window(
        1,
        0,
        source_records=130,
        target_records=170,
        missing=0,
        duplicates=40,
        late=0,
        completeness_pct=100.0,
        loss=False,
        missing_offsets=[],
        duplicate_offsets=[{"first": 60, "last": 99}],
    ),
]


@pytest.fixture(scope="module")
def audited(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, object]]:
    base = tmp_path_factory.mktemp("audit")
    lake, out = str(base / "lake"), str(base / "out")
    write_facts(lake, _facts())
    return out, run_job("audit", lake, out, spark=spark, window_minutes=1, late_after_ms=MINUTE)


def test_windows_count_source_target_missing_duplicates_and_late(
    spark: SparkSession, audited: tuple[str, dict]
) -> None:
    windows = spark.read.parquet(f"{audited[0]}/windows").selectExpr("*", "unix_millis(window_start) as window_ms")
    assert_frame_equal(windows, EXPECTED)


def test_the_summary_flags_the_lossy_window_with_its_offsets(audited: tuple[str, dict]) -> None:
    summary = audited[1]
    assert summary["loss"] == [
        {
            "flow": "a->b",
            "topic": "t",
            "partition": 0,
            "window_start": "2027-01-15T08:00:00Z",
            "missing": 7,
            "missing_offsets": [{"first": 50, "last": 56}],
        }
    ]
    totals = {
        k: summary[k]
        for k in ("windows", "windows_with_loss", "source_records", "target_records", "missing", "duplicates", "late")
    }
    assert totals == {
        "windows": 3,
        "windows_with_loss": 1,
        "source_records": 328,
        "target_records": 364,
        "missing": 7,
        "duplicates": 43,
        "late": 10,
    }
    assert summary["completeness_pct"] == round(321 * 100 / 328, 3)


def test_a_wrong_missing_count_fails_the_comparison(spark: SparkSession, audited: tuple[str, dict]) -> None:
    windows = spark.read.parquet(f"{audited[0]}/windows").selectExpr("*", "unix_millis(window_start) as window_ms")
    wrong = [{**row, "missing": 6} if row["loss"] else row for row in EXPECTED]
    with pytest.raises(AssertionError):
        assert_frame_equal(windows, wrong)


def test_the_job_window_selects_facts_by_ack_time(
    spark: SparkSession, audited: tuple[str, dict], tmp_path: Path
) -> None:
    lake = str(Path(audited[0]).parent / "lake")
    since = datetime.fromtimestamp((T0 + MINUTE) / 1000, UTC)
    summary = run_job("audit", lake, str(tmp_path / "out"), since=since, spark=spark, window_minutes=1)
    # Acknowledged from T0+1m: the runs 100..149 and 152..199, the 3 duplicates and the 10 late records. The
    # lookback still knows what was acknowledged before: 83..89 are not missing, 80..82 are duplicates.
    figures = ("windows", "target_records", "missing", "duplicates", "late")
    assert tuple(summary[k] for k in figures) == (2, 111, 0, 3, 10)
    no_lookback = run_job(
        "audit", lake, str(tmp_path / "o2"), since=since, spark=spark, window_minutes=1, lookback_minutes=0
    )
    assert tuple(no_lookback[k] for k in figures) == (2, 111, 7, 0, 10)  # 83..89 look missing without it


def test_the_summary_has_each_flows_complete_missing_and_duplicated_records_per_window(
    audited: tuple[str, dict],
) -> None:
    """Summed over the flow's partitions, window by window: what the flow page charts."""
    assert audited[1]["series"] == [
        {
            "flow": "a->b",
            "window_start": "2027-01-15T08:00:00Z",
            "window_end": "2027-01-15T08:01:00Z",
            "source_records": 230,
            "complete": 223,
            "missing": 7,
            "duplicates": 43,
            "late": 10,
        },
        {
            "flow": "a->b",
            "window_start": "2027-01-15T08:01:00Z",
            "window_end": "2027-01-15T08:02:00Z",
            "source_records": 98,
            "complete": 98,
            "missing": 0,
            "duplicates": 0,
            "late": 0,
        },
    ]
