"""Topology on generated heartbeat arrivals: hops, diamonds, dead, silent and unconfigured links, cycles."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from replication.analytics.jobs import run_job
from replication.analytics.topology import simple_cycles
from replication.facts.lake import register_flow
from tests.analytics.factgen import T0, arrival, write_arrivals
from tests.analytics.frames import assert_frame_equal, plain

pytestmark = pytest.mark.spark
UNTIL = T0 + 60_000


def _diamond_lake(lake: str) -> None:
    """A->B->D and A->C->D: heartbeats written into each flow's source (as MM2 does), replicated from there."""
    paths = [["A", "B"], ["A", "C"], ["B", "D"], ["C", "D"], ["A", "B", "D"], ["A", "C", "D"]]
    write_arrivals(
        lake, [arrival(p[-1], p, UNTIL - s * 1000 - 50, UNTIL - s * 1000, s) for p in paths for s in (1, 2, 3)]
    )
    for source, target in (("A", "B"), ("A", "C"), ("B", "D"), ("C", "D")):
        register_flow(lake, f"{source}->{target}", source, target, 1.0)


def test_a_diamond_is_found_with_both_paths_and_the_hop_matrix(spark: SparkSession, tmp_path: Path) -> None:
    lake, out = str(tmp_path / "lake"), str(tmp_path / "out")
    _diamond_lake(lake)
    summary = run_job("topology", lake, out, until=_dt(UNTIL), spark=spark)
    assert summary["diamonds"] == [{"origin": "A", "destination": "D", "paths": ["A->B->D", "A->C->D"]}]
    assert summary["hops"] == {"A": {"B": 1, "C": 1, "D": 2}, "B": {"D": 1}, "C": {"D": 1}}
    assert summary["nodes"] == ["A", "B", "C", "D"]
    assert (summary["cycles"], summary["dead_links"], summary["silent_flows"], summary["unconfigured_flows"]) == (
        [],
        [],
        [],
        [],
    )
    assert summary["heartbeat_arrivals"] == 18
    hops = spark.read.parquet(f"{out}/hops")
    expected = [("A", "B", 1, 1), ("A", "C", 1, 1), ("A", "D", 2, 2), ("B", "D", 1, 1), ("C", "D", 1, 1)]
    assert_frame_equal(hops, [dict(zip(("origin", "destination", "hops", "paths"), r, strict=True)) for r in expected])
    links = spark.read.parquet(f"{out}/links")
    fresh = {"heartbeats": 6, "last_heartbeat_ms": UNTIL - 1000, "configured": True, "observed": True, "dead": False}
    assert_frame_equal(links, [{"flow": f, **fresh} for f in ("A->B", "A->C", "B->D", "C->D")])


def test_a_wrong_hop_count_fails_the_comparison(spark: SparkSession, tmp_path: Path) -> None:
    lake, out = str(tmp_path / "lake"), str(tmp_path / "out")
    _diamond_lake(lake)
    run_job("topology", lake, out, until=_dt(UNTIL), spark=spark)
    wrong = [{"origin": "A", "destination": "D", "hops": 1}]  # A reaches D in 2 hops, never 1
    with pytest.raises(AssertionError):
        assert_frame_equal(spark.read.parquet(f"{out}/hops").where("destination = 'D' and origin = 'A'"), wrong)


def test_dead_silent_and_unconfigured_links_and_cycles(spark: SparkSession, tmp_path: Path) -> None:
    lake, out = str(tmp_path / "lake"), str(tmp_path / "out")
    write_arrivals(
        lake,
        [
            arrival("B", ["A", "B"], UNTIL - 1050, UNTIL - 1000),  # fresh
            arrival("C", ["B", "C"], UNTIL - 10_050, UNTIL - 10_000),  # 10 s old: dead after 5 intervals of 1 s
            arrival("C", ["A", "B", "C"], UNTIL - 10_100, UNTIL - 10_000),
            arrival("A", ["C", "A"], UNTIL - 2050, UNTIL - 2000),  # observed, but no flow C->A is configured
        ],
    )
    flows = ["A->B", "B->C", "X->Y"]  # X->Y never sent a heartbeat
    summary = run_job("topology", lake, out, until=_dt(UNTIL), spark=spark, flows=flows, dead_after=5)
    assert summary["dead_links"] == ["B->C"]
    assert summary["silent_flows"] == ["X->Y"]
    assert summary["unconfigured_flows"] == ["C->A"]
    assert summary["cycles"] == [["A", "B", "C"]]
    assert summary["hops"] == {"A": {"B": 1, "C": 2}, "B": {"C": 1}, "C": {"A": 1}}
    assert summary["diamonds"] == []
    graph = [(link["source"], link["target"], link["flow"], link["dead"]) for link in summary["links"]]
    assert graph == [
        ("A", "B", "A->B", False),
        ("B", "C", "B->C", True),
        ("C", "A", "C->A", False),
        ("X", "Y", "X->Y", False),
    ]
    links = plain(
        spark.read.parquet(f"{out}/links"), ["flow", "configured", "observed", "dead", "silent", "unconfigured"]
    )
    assert links == sorted(
        [
            {
                "flow": "A->B",
                "configured": True,
                "observed": True,
                "dead": False,
                "silent": False,
                "unconfigured": False,
            },
            {
                "flow": "B->C",
                "configured": True,
                "observed": True,
                "dead": True,
                "silent": False,
                "unconfigured": False,
            },
            {
                "flow": "C->A",
                "configured": False,
                "observed": True,
                "dead": False,
                "silent": False,
                "unconfigured": True,
            },
            {
                "flow": "X->Y",
                "configured": True,
                "observed": False,
                "dead": False,
                "silent": True,
                "unconfigured": False,
            },
        ],
        key=repr,
    )


def test_links_are_judged_as_of_the_last_collector_pass_within_the_allowed_lag(
    spark: SparkSession, tmp_path: Path
) -> None:
    lake = str(tmp_path / "lake")
    # One collector pass 25 s before the window end stamped every arrival it read (arrival_kind 'consumed').
    write_arrivals(
        lake,
        [
            arrival("B", ["A", "B"], UNTIL - 25_500, UNTIL - 25_000),
            arrival("C", ["B", "C"], UNTIL - 31_000, UNTIL - 25_000),
        ],
    )
    flows = ["A->B", "B->C"]
    between_passes = run_job("topology", lake, str(tmp_path / "a"), until=_dt(UNTIL), spark=spark, flows=flows)
    assert between_passes["dead_links"] == []  # judged at the pass: A->B and B->C's last heartbeats came with it
    strict = run_job(
        "topology", lake, str(tmp_path / "b"), until=_dt(UNTIL), spark=spark, flows=flows, collection_lag_s=10
    )
    assert strict["dead_links"] == ["A->B", "B->C"]  # a pass this late means the links (or the collector) died


def test_simple_cycles_are_listed_once_from_their_smallest_alias() -> None:
    edges = [("a", "b"), ("b", "a"), ("b", "c"), ("c", "a"), ("c", "d")]
    assert simple_cycles(edges) == [["a", "b"], ["a", "b", "c"]]
    assert simple_cycles([("a", "b"), ("b", "c")]) == []


def _dt(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)
