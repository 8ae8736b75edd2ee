"""Ratios of alternating pairs and their spread: how Mirrorplane compares with MirrorMaker 2, and how sure that is.

A pair is two runs next to each other in the alternation (same round, same data): `mp-alo` beside `mm2`, `mp-eos`
beside `mm2-eos`. Load from other users of the machine drifts slowly, so a ratio within a pair cancels most of it;
the spread of the pair ratios is what is left. Each ratio is reported as its median with the interval min-max over
the pairs: with n pairs the true median lies outside [min, max] with probability 2 / 2^n (50 % at 2 pairs, 6 %
at 5). `pairs_for_10pct` is how many pairs would make the 95 % interval of the mean log ratio narrower than +-5 %,
so that two figures 10 % apart no longer overlap, given the spread seen (None below two pairs).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

# Each Mirrorplane mode against MirrorMaker 2 in the same guarantee.
VS_MM2: dict[str, str] = {"mp-alo": "mm2", "mp-eos": "mm2-eos"}
THROUGHPUT_FIELDS = ("records_per_s", "steady_records_per_s", "cpu_s_per_m", "peak_rss_mb")
LATENCY_FIELDS = ("p50_ms", "p99_ms")
Z95 = 1.96
HALF_WIDTH = math.log(1.05)


class Run(Protocol):
    """What a pair needs of a run: its round and replicator (a dataset for throughput runs)."""

    round: int
    replicator: str


def spread(ratios: Sequence[float]) -> dict[str, Any]:
    """Median, min-max interval, pair count and the pairs a +-5 % interval would take, of some pair ratios."""
    if not ratios:
        return {"pairs": 0, "median": None, "low": None, "high": None, "ratios": [], "pairs_for_10pct": None}
    return {
        "pairs": len(ratios),
        "median": round(statistics.median(ratios), 3),
        "low": round(min(ratios), 3),
        "high": round(max(ratios), 3),
        "ratios": [round(r, 3) for r in ratios],
        "pairs_for_10pct": pairs_for_10pct(ratios),
    }


def pairs_for_10pct(ratios: Sequence[float]) -> int | None:
    """Pairs whose 95 % interval of the mean log ratio is within +-5 %, at the spread of these ratios."""
    logs = [math.log(r) for r in ratios if r > 0]
    if len(logs) < 2:
        return None
    sd = statistics.stdev(logs)
    return max(2, math.ceil((Z95 * sd / HALF_WIDTH) ** 2))


def pair_values(runs: Iterable[Any], name: str, base: str, field: str, key: str = "dataset") -> list[float]:
    """name / base of `field` for every (round, key) that ran both; key='' pairs by round alone."""
    values: dict[tuple[Any, ...], dict[str, float]] = {}
    for run in runs:
        pair = (run.round, getattr(run, key) if key else None)
        values.setdefault(pair, {})[run.replicator] = float(getattr(run, field))
    return [v[name] / v[base] for v in values.values() if name in v and base in v and v[base]]


def vs_mm2(throughput: Sequence[Any], latency: Sequence[Any], pairs: Mapping[str, str] = VS_MM2) -> dict[str, Any]:
    """{'throughput': [per dataset and replicator: each field's spread], 'latency': {replicator: {field: spread}}}."""
    rows = []
    for data in dict.fromkeys(r.dataset for r in throughput):
        runs = [r for r in throughput if r.dataset == data]
        for name, base in pairs.items():
            if any(r.replicator == name for r in runs) and any(r.replicator == base for r in runs):
                fields = {f: spread(pair_values(runs, name, base, f)) for f in THROUGHPUT_FIELDS}
                rows.append({"dataset": data, "replicator": name, "vs": base, **fields})
    lat = {
        name: {"vs": base, **{f: spread(pair_values(latency, name, base, f, key="")) for f in LATENCY_FIELDS}}
        for name, base in pairs.items()
        if any(r.replicator == name for r in latency) and any(r.replicator == base for r in latency)
    }
    return {"throughput": rows, "latency": lat}


def interval_text(s: Mapping[str, Any]) -> str:
    """'1.23x [1.10-1.31], 3 pairs' or '-' without pairs."""
    if not s["pairs"]:
        return "-"
    need = f", {s['pairs_for_10pct']} for +-5%" if s["pairs_for_10pct"] else ""
    return f"{s['median']:.2f}x [{s['low']:.2f}-{s['high']:.2f}] n={s['pairs']}{need}"
