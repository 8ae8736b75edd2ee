"""Printing and saving benchmark figures: tables, Mirrorplane / MirrorMaker ratios, machine description, JSON."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import statistics
import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import confluent_kafka

from bench.latency import LatencyResult
from bench.throughput import ThroughputResult
from localkafka.dist import find_java

RESULTS = Path(__file__).resolve().parent / "results"
BASE = "mm"


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]], text_columns: int = 0, min_width: int = 0) -> str:
    """A Markdown table; the first `text_columns` columns are left-aligned, the figures right-aligned.

    min_width keeps columns aligned when a table is printed a row at a time.
    """
    cells = [[str(h) for h in headers], *[[_cell(v) for v in row] for row in rows]]
    widths = [max(min_width, *(len(row[i]) for row in cells)) for i in range(len(headers))]

    def line(row: list[str]) -> str:
        pairs = enumerate(zip(row, widths, strict=True))
        padded = (cell.ljust(w) if i < text_columns else cell.rjust(w) for i, (cell, w) in pairs)
        return "| " + " | ".join(padded) + " |"

    rule = "|" + "|".join(
        ":" + "-" * (w + 1) if i < text_columns else "-" * (w + 1) + ":" for i, w in enumerate(widths)
    )
    return "\n".join([line(cells[0]), rule + "|", *(line(row) for row in cells[1:])])


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.2f}" if abs(value) < 100 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return "-" if value is None else str(value)


THROUGHPUT_HEADERS = [
    "round",
    "replicator",
    "data",
    "records/s",
    "steady rec/s",
    "MB/s",
    "CPU s/M rec",
    "steady CPU s/M",
    "peak RSS MB",
    "broker CPU s",
    "machine busy %",
]


def throughput_row(r: ThroughputResult) -> list[Any]:
    return [
        r.round,
        r.replicator,
        r.dataset,
        r.records_per_s,
        r.steady_records_per_s,
        r.mb_per_s,
        r.cpu_s_per_m,
        r.steady_cpu_s_per_m,
        r.peak_rss_mb,
        r.broker_cpu_s,
        r.machine_busy_pct,
    ]


def _ratio(a: float, b: float) -> float:
    return round(a / b, 2) if b else float("nan")


def pair_ratios(results: Sequence[ThroughputResult], name: str, base: str, field: str) -> list[float]:
    """name / base for `field`, per (round, dataset) pair that ran both."""
    by_key = {(r.round, r.dataset, r.replicator): getattr(r, field) for r in results}
    return [
        _ratio(value, by_key[(rnd, data, base)])
        for (rnd, data, rep), value in by_key.items()
        if rep == name and (rnd, data, base) in by_key
    ]


def throughput_summary(results: Sequence[ThroughputResult]) -> list[dict[str, Any]]:
    """Per dataset and replicator: medians, and the median of per-pair ratios to MirrorMaker."""
    summary = []
    for data in dict.fromkeys(r.dataset for r in results):
        for rep in dict.fromkeys(r.replicator for r in results):
            runs = [r for r in results if r.dataset == data and r.replicator == rep]
            if not runs:
                continue
            both = [r for r in results if r.dataset == data]
            summary.append(
                {
                    "dataset": data,
                    "replicator": rep,
                    "runs": len(runs),
                    "records_per_s": statistics.median(r.records_per_s for r in runs),
                    "steady_records_per_s": statistics.median(r.steady_records_per_s for r in runs),
                    "mb_per_s": statistics.median(r.mb_per_s for r in runs),
                    "cpu_s_per_m": statistics.median(r.cpu_s_per_m for r in runs),
                    "rate_vs_mm": pair_ratios(both, rep, BASE, "records_per_s"),
                    "steady_rate_vs_mm": pair_ratios(both, rep, BASE, "steady_records_per_s"),
                    "cpu_vs_mm": pair_ratios(both, rep, BASE, "cpu_s_per_m"),
                }
            )
    return summary


def summary_table(summary: Sequence[dict[str, Any]]) -> str:
    headers = [
        "data",
        "replicator",
        "runs",
        "records/s",
        "steady rec/s",
        "MB/s",
        "CPU s/M rec",
        "rate / MM (pairs)",
        "steady / MM",
        "CPU / MM",
    ]
    return table(
        headers,
        (
            [
                s["dataset"],
                s["replicator"],
                s["runs"],
                s["records_per_s"],
                s["steady_records_per_s"],
                s["mb_per_s"],
                s["cpu_s_per_m"],
                _ratios(s["rate_vs_mm"]),
                _ratios(s["steady_rate_vs_mm"]),
                _ratios(s["cpu_vs_mm"]),
            ]
            for s in summary
        ),
        text_columns=2,
    )


def _ratios(values: Sequence[float]) -> str:
    if not values:
        return "-"
    return f"{statistics.median(values):.2f}x ({', '.join(f'{v:.2f}' for v in values)})"


LATENCY_HEADERS = [
    "round",
    "replicator",
    "rate/s",
    "measured",
    "lost",
    "p50 ms",
    "p90 ms",
    "p99 ms",
    "p99.9 ms",
    "max ms",
    "CPU %",
    "CPU s/M rec",
]


def latency_row(r: LatencyResult) -> list[Any]:
    return [
        r.round,
        r.replicator,
        r.rate,
        r.measured,
        r.produced - r.received,
        r.p50_ms,
        r.p90_ms,
        r.p99_ms,
        r.p999_ms,
        r.max_ms,
        r.cpu_pct,
        r.cpu_s_per_m,
    ]


def latency_ratios(results: Sequence[LatencyResult]) -> dict[str, dict[str, float]]:
    """Per replicator: median p50 and p99 over rounds divided by MirrorMaker's."""

    def median_of(rep: str, field: str) -> float:
        return float(statistics.median(getattr(r, field) for r in results if r.replicator == rep))

    reps = dict.fromkeys(r.replicator for r in results)
    if BASE not in reps:
        return {}
    return {
        rep: {f"{f}_vs_mm": _ratio(median_of(rep, f), median_of(BASE, f)) for f in ("p50_ms", "p99_ms")}
        for rep in reps
        if rep != BASE
    }


def target_checks(
    throughput: Sequence[ThroughputResult], latency: Sequence[LatencyResult], small: str, large: str
) -> list[dict[str, Any]]:
    """Mirrorplane's targets (performance-baseline.md), each with the median of its per-pair ratios."""
    checks = [
        ("mp-alo records/s vs mm", small, "mp-alo", "mm", "records_per_s", ">=", 1.5),
        ("mp-alo records/s vs mm", large, "mp-alo", "mm", "records_per_s", ">=", 3.0),
        ("mp-alo CPU/record vs mm", small, "mp-alo", "mm", "cpu_s_per_m", "<=", 0.6),
        ("mp-alo CPU/record vs mm", large, "mp-alo", "mm", "cpu_s_per_m", "<=", 0.6),
        ("mp-alo records/s vs bare loop", small, "mp-alo", "loop", "records_per_s", ">=", 0.9),
        ("mp-alo records/s vs bare loop", large, "mp-alo", "loop", "records_per_s", ">=", 0.9),
        ("mp-eos records/s vs mp-alo", small, "mp-eos", "mp-alo", "records_per_s", ">=", 0.7),
        ("mp-eos records/s vs mp-alo", large, "mp-eos", "mp-alo", "records_per_s", ">=", 0.7),
    ]
    rows = []
    for what, data, name, base, field, op, goal in checks:
        ratios = pair_ratios([r for r in throughput if r.dataset == data], name, base, field)
        if ratios:
            rows.append(_check(f"{what}, {data}", statistics.median(ratios), op, goal))
    for name, latency_ratio in latency_ratios(latency).items():
        rows.append(_check(f"{name} p99 latency vs mm", latency_ratio["p99_ms_vs_mm"], "<=", 1.0))
    return rows


def _check(what: str, measured: float, op: str, goal: float) -> dict[str, Any]:
    met = measured >= goal if op == ">=" else measured <= goal
    return {"target": what, "goal": f"{op} {goal:g}x", "measured": round(measured, 2), "met": met}


def targets_table(checks: Sequence[dict[str, Any]]) -> str:
    rows = ([c["target"], c["goal"], f"{c['measured']:.2f}x", "yes" if c["met"] else "NO"] for c in checks)
    return table(["target", "goal", "measured (median pair)", "met"], rows, text_columns=2)


def machine() -> dict[str, Any]:
    """What the figures were measured on; loadavg shows how shared the machine was."""
    meminfo = Path("/proc/meminfo").read_text().split("\n", 1)[0].split()
    cpuinfo = Path("/proc/cpuinfo").read_text()
    model = next((line.split(":", 1)[1].strip() for line in cpuinfo.splitlines() if line.startswith("model name")), "")
    java = subprocess.run([find_java(), "-version"], capture_output=True, text=True, check=False).stderr
    return {
        "nproc": os.cpu_count(),
        "memory_gib": round(int(meminfo[1]) / 1024 / 1024, 1),
        "cpu_model": model,
        "python": platform.python_version(),
        "confluent_kafka": confluent_kafka.__version__,
        "librdkafka": confluent_kafka.libversion()[0],
        "java": java.splitlines()[0] if java else "",
        "loadavg": Path("/proc/loadavg").read_text().split()[:3],
        "git_commit": _git("rev-parse", "--short", "HEAD"),
        "engine_source": engine_source(),
    }


def engine_source() -> dict[str, Any]:
    """Which replication/ code ran: the working tree may hold uncommitted changes, so hash what is on disk."""
    package = RESULTS.parent.parent / "replication"
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes())
    changed = _git("status", "--porcelain", "--", str(package)).splitlines()
    return {"sha256": digest.hexdigest()[:16], "uncommitted_files": len(changed)}


def _git(*args: str) -> str:
    out = subprocess.run(["git", *args], capture_output=True, text=True, check=False, cwd=RESULTS.parent)
    return out.stdout.strip()


def save(document: dict[str, Any], name: str, latest: bool = True) -> Path:
    """bench/results/<name>.json, and with latest the same as latest.json (the one result file git keeps)."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    text = json.dumps(document, indent=2, default=str) + "\n"
    path = RESULTS / f"{name}.json"
    path.write_text(text)
    if latest:
        (RESULTS / "latest.json").write_text(text)
    return path
