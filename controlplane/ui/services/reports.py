"""The latest analytics reports (latency, topology, audit) that mention a flow, when any have been run.

The analytics jobs write ``<out>/summary.json``; the UI looks for them under ``<state dir>/analytics`` (any depth
up to three) and shows, per job, the newest summary's rows about the flow. No reports: an empty list.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.conf import settings

log = logging.getLogger(__name__)
MAX_ROWS = 20
# The whole-lake figures of each job's summary worth a glance (facts read, records, completeness, arrivals).
FIGURES = ("facts", "records", "source_records", "missing", "duplicates", "completeness_pct", "heartbeat_arrivals")
# The per-window rows each job's summary keeps for the flow page's charts (`series`): charted, not tabled, and at
# most MAX_SERIES of a flow's (the newest), which a day's audit at one-minute windows stays within.
SERIES = "series"
MAX_SERIES = 3000
_PATTERNS = ("*/summary.json", "*/*/summary.json", "*/*/*/summary.json")


def reports_dir() -> Path:
    return Path(settings.STATE_DIR) / "analytics"


def latest_for_flow(flow_name: str) -> list[dict[str, Any]]:
    newest: dict[str, tuple[float, dict[str, Any]]] = {}
    for path in _summaries():
        summary = _load(path)
        job, mtime = str(summary.get("job", "")), path.stat().st_mtime
        if job and (job not in newest or mtime > newest[job][0]):
            newest[job] = (mtime, summary)
    return [_report(job, mtime, summary, flow_name) for job, (mtime, summary) in sorted(newest.items())]


def _summaries() -> list[Path]:
    root = reports_dir()
    return [p for pattern in _PATTERNS for p in root.glob(pattern)] if root.is_dir() else []


def _load(path: Path) -> dict[str, Any]:
    try:
        loaded = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        log.warning("analytics summary %s not read: %s", path, exc)
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _report(job: str, mtime: float, summary: dict[str, Any], flow_name: str) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    flagged: list[str] = []
    for key, value in summary.items():
        if isinstance(value, list) and key != SERIES:
            rows += [{"section": key, **row} for row in value if isinstance(row, dict) and row.get("flow") == flow_name]
            if flow_name in value:
                flagged.append(key)
    return {
        "job": job,
        "written_at": datetime.fromtimestamp(mtime, UTC).isoformat(),
        "since": summary.get("since"),
        "until": summary.get("until"),
        # A run over an empty window says so; older summaries (before `no_data`) count as having data.
        "no_data": bool(summary.get("no_data", False)),
        "note": str(summary.get("note", "")),
        "figures": {key: summary[key] for key in FIGURES if key in summary},
        "flagged_in": flagged,
        "rows": rows[:MAX_ROWS],
        "series": _series(summary, flow_name),
        "graph": _graph(summary),
    }


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
