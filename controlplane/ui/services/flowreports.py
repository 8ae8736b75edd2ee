"""A flow's analytics reports as its page shows them: per job (latency, topology, audit), the newest finished run's
summary rows about the flow. The runs are ``Report`` rows (``controlplane.reports``); none finished: an empty list.
"""

from __future__ import annotations

from typing import Any

from controlplane.reports.choices import ReportJob, ReportStatus
from controlplane.reports.models import Report

MAX_ROWS = 20
# The whole-lake figures of each job's summary worth a glance (facts read, records, completeness, arrivals).
FIGURES = ("facts", "records", "source_records", "missing", "duplicates", "completeness_pct", "heartbeat_arrivals")
# The per-window rows each job's summary keeps for the flow page's charts (`series`): charted, not tabled, and at
# most MAX_SERIES of a flow's (the newest), which a day's audit at one-minute windows stays within.
SERIES = "series"
MAX_SERIES = 3000
FINISHED = (ReportStatus.SUCCEEDED, ReportStatus.NO_DATA)  # a failed run has no summary to show
# Postgres's jsonb keeps a summary's keys in an order of its own (shortest first), SQLite in the job's: the page's
# sections and columns are put in one order here, the same on either. Where a row is comes first (path, clusters,
# topic, partition, window), then its figures by name, a figure's percentiles in rising order.
PLACE = ("path", "source", "target", "topic", "partition", "window_start", "window_end", "at")
PERCENTILES = ("p50", "p95", "p99", "max")


def latest_for_flow(flow_name: str) -> list[dict[str, Any]]:
    """The newest finished run of each job, by job name, with what its summary says about the flow."""
    latest = []
    for job in sorted(ReportJob.values):
        report = Report.objects.filter(job=job, status__in=FINISHED).order_by("-finished_at", "-pk").first()
        if report is not None:
            latest.append(_report(report, flow_name))
    return latest


def _report(report: Report, flow_name: str) -> dict[str, Any]:
    summary = report.summary if isinstance(report.summary, dict) else {}
    rows: list[dict[str, Any]] = []
    flagged: list[str] = []
    for key, value in sorted(summary.items()):
        if isinstance(value, list) and key != SERIES:
            rows += [
                {"section": key, **_in_column_order(row)}
                for row in value
                if isinstance(row, dict) and row.get("flow") == flow_name
            ]
            if flow_name in value:
                flagged.append(key)
    return {
        "job": report.job,
        "written_at": (report.finished_at or report.created_at).isoformat(),
        "since": summary.get("since"),
        "until": summary.get("until"),
        # A run over an empty window says so.
        "no_data": report.status == ReportStatus.NO_DATA or bool(summary.get("no_data", False)),
        "note": str(summary.get("note", "")),
        "figures": {key: summary[key] for key in FIGURES if key in summary},
        "flagged_in": flagged,
        "rows": rows[:MAX_ROWS],
        "series": _series(summary, flow_name),
        "graph": _graph(summary),
    }


def _in_column_order(row: dict[str, Any]) -> dict[str, Any]:
    return {key: row[key] for key in sorted(row, key=_column)}


def _column(key: str) -> tuple[int, str, int]:
    if key in PLACE:
        return 0, "", PLACE.index(key)
    stem, _, last = key.rpartition("_")
    if last in PERCENTILES:
        return 1, stem, 1 + PERCENTILES.index(last)
    return 1, key, 0


def _series(summary: dict[str, Any], flow_name: str) -> list[dict[str, Any]]:
    rows = summary.get(SERIES)
    mine = (
        [row for row in rows if isinstance(row, dict) and row.get("flow") == flow_name]
        if isinstance(rows, list)
        else []
    )
    return mine[-MAX_SERIES:]


def _graph(summary: dict[str, Any]) -> dict[str, Any] | None:
    """The topology as the flow page draws it, every cluster and link (not only the flow's); None for other jobs."""
    nodes, links = summary.get("nodes"), summary.get("links")
    if not isinstance(nodes, list) or not isinstance(links, list):
        return None
    return {"nodes": [str(n) for n in nodes], "links": [link for link in links if isinstance(link, dict)]}
