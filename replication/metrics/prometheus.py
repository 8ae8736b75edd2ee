"""A metrics snapshot in the Prometheus text exposition format 0.0.4."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from replication.metrics.distribution import QUANTILES

_DISTRIBUTIONS = (
    ("replication-latency-ms", "mirrorplane_replication_latency_ms", "Source record timestamp to target ack, ms"),
    ("record-age-ms", "mirrorplane_record_age_ms", "Age of a record when the task consumed it, ms"),
)


def render_prometheus(snapshot: Mapping[str, Any]) -> str:
    """A `snapshot()` as Prometheus text.

    Distributions are summaries: quantiles over the sliding window (NaN while it is empty), `_sum`/`_count`
    cumulative, and a separate `_max` gauge over the window (also NaN while empty). Lag appears once it is set.
    """
    partitions = [
        (_labels(("flow", flow), ("topic", p["topic"]), ("partition", p["partition"])), p)
        for flow, metrics in snapshot["flows"].items()
        for p in metrics["partitions"].values()
    ]
    tasks = [
        (_labels(("flow", flow), ("task", task)), status)
        for flow, metrics in snapshot["flows"].items()
        for task, status in metrics["tasks"].items()
    ]
    lines: list[str] = []
    _family(lines, "mirrorplane_record_count_total", "counter", "Records replicated", _pick(partitions, "record-count"))
    _family(lines, "mirrorplane_byte_count_total", "counter", "Bytes replicated", _pick(partitions, "byte-count"))
    for key, name, text in _DISTRIBUTIONS:
        _summary(lines, name, text, [(labels, p[key]) for labels, p in partitions])
    lag = "Records in the source not yet replicated (end offset minus replicated position)"
    _family(lines, "mirrorplane_replication_record_lag", "gauge", lag, _pick(partitions, "replication-record-lag"))
    lost = "Records that can no longer be replicated (retention gap, topic recreated)"
    _family(lines, "mirrorplane_record_lost_count_total", "counter", lost, _pick(partitions, "record-lost-count"))
    skipped = "Records a restart found already written at the target and did not write again"
    resumed = _pick(partitions, "resume-skipped-count")
    _family(lines, "mirrorplane_resume_skipped_count_total", "counter", skipped, resumed)
    mismatch = "Restarts that could not verify the target's records and copied them again (duplicates possible)"
    mismatches = _pick(partitions, "resume-mismatch-count")
    _family(lines, "mirrorplane_resume_mismatch_count_total", "counter", mismatch, mismatches)
    up = ((labels, int(status["state"] == "RUNNING")) for labels, status in tasks)
    _family(lines, "mirrorplane_task_up", "gauge", "1 if the task is RUNNING", up)
    faulted = ((labels, int(status["fault"] is not None)) for labels, status in tasks)
    _family(lines, "mirrorplane_task_faulted", "gauge", "1 while the task reports a lasting fault", faulted)
    return "\n".join(lines) + "\n"


def _pick(rows: list[tuple[str, dict[str, Any]]], key: str) -> Iterable[tuple[str, float | None]]:
    return ((labels, row[key]) for labels, row in rows)


def _family(lines: list[str], name: str, kind: str, text: str, samples: Iterable[tuple[str, float | None]]) -> None:
    lines += (f"# HELP {name} {text}.", f"# TYPE {name} {kind}")
    lines.extend(f"{name}{{{labels}}} {_number(value)}" for labels, value in samples if value is not None)


def _summary(lines: list[str], name: str, text: str, rows: list[tuple[str, dict[str, Any]]]) -> None:
    lines += (f"# HELP {name} {text}, quantiles over a sliding window.", f"# TYPE {name} summary")
    for labels, stats in rows:
        lines.extend(f'{name}{{{labels},quantile="{q}"}} {_number(stats[key])}' for _, key, q in QUANTILES)
        lines.append(f"{name}_sum{{{labels}}} {_number(stats['sum'])}")
        lines.append(f"{name}_count{{{labels}}} {_number(stats['count'])}")
    maxima = ((labels, math.nan if stats["max"] is None else stats["max"]) for labels, stats in rows)
    _family(lines, f"{name}_max", "gauge", f"{text}, maximum over a sliding window", maxima)


def _labels(*pairs: tuple[str, object]) -> str:
    return ",".join(f'{name}="{_escape(str(value))}"' for name, value in pairs)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "NaN"
    if isinstance(value, float) and math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(value)
