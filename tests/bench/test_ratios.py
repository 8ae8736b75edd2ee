"""Ratios to MirrorMaker 2 per alternating pair, their min-max interval, and the pairs a +-5 % interval takes."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from bench.ratios import interval_text, pair_values, pairs_for_10pct, spread, vs_mm2


@dataclass
class Run:
    round: int
    replicator: str
    dataset: str = "100 B"
    records_per_s: float = 0.0
    steady_records_per_s: float = 0.0
    cpu_s_per_m: float = 0.0
    peak_rss_mb: float = 0.0
    p50_ms: float = 0.0
    p99_ms: float = 0.0


def _rate(round_no: int, name: str, rate: float, dataset: str = "100 B") -> Run:
    return Run(round_no, name, dataset, rate, rate, 1.0, 100.0)


def test_a_ratio_is_taken_within_each_round_and_dataset_only() -> None:
    runs = [
        _rate(1, "mm2", 100),
        _rate(1, "mp-alo", 300),
        _rate(2, "mm2", 200),
        _rate(2, "mp-alo", 500),
        _rate(1, "mm2", 10, "1 KiB"),  # no mp-alo in this round and dataset: no pair
        _rate(3, "mp-alo", 900),  # no mm2 in round 3: no pair
    ]
    assert pair_values(runs, "mp-alo", "mm2", "records_per_s") == [3.0, 2.5]


def test_the_spread_is_median_min_and_max_over_the_pairs() -> None:
    s = spread([1.2, 1.0, 1.5])
    assert (s["pairs"], s["median"], s["low"], s["high"]) == (3, 1.2, 1.0, 1.5)
    assert interval_text(s).startswith("1.20x [1.00-1.50] n=3")


def test_no_pairs_is_said_as_no_data() -> None:
    assert spread([])["median"] is None
    assert interval_text(spread([])) == "-"


def test_pairs_for_a_10pct_change_grow_with_the_spread() -> None:
    assert pairs_for_10pct([1.0]) is None
    assert pairs_for_10pct([1.0, 1.0, 1.0]) == 2  # no spread: the two pairs of the minimum
    # log-ratio sd of [0.9, 1.1] is 0.1419; (1.96 * 0.1419 / ln 1.05)^2 = 32.5 -> 33 pairs
    assert pairs_for_10pct([0.9, 1.1]) == 33
    assert pairs_for_10pct([0.95, 1.05]) < pairs_for_10pct([0.9, 1.1])  # type: ignore[operator]


def test_each_mirrorplane_mode_is_compared_with_mm2_in_the_same_guarantee() -> None:
    throughput = [
        _rate(1, "mm2", 100),
        _rate(1, "mp-alo", 400),
        _rate(1, "mm2-eos", 50),
        _rate(1, "mp-eos", 300),
    ]
    latency = [Run(1, "mm2", p50_ms=20, p99_ms=100), Run(1, "mp-alo", p50_ms=5, p99_ms=50)]
    vs = vs_mm2(throughput, latency)
    rows = {(t["replicator"], t["vs"]): t["records_per_s"]["median"] for t in vs["throughput"]}
    assert rows == {("mp-alo", "mm2"): 4.0, ("mp-eos", "mm2-eos"): 6.0}
    assert vs["latency"]["mp-alo"]["p50_ms"]["median"] == pytest.approx(0.25)
    assert vs["latency"]["mp-alo"]["p99_ms"]["median"] == pytest.approx(0.5)
    assert "mp-eos" not in vs["latency"]  # neither mp-eos nor mm2-eos ran at a fixed rate
