"""python -m replication.analytics <job> --lake URI --out URI [--since T] [--until T] [--master URL]

Also runs under spark-submit, which then decides the master and settings:
    PYTHONPATH=. spark-submit --master local[2] replication/analytics/__main__.py latency --lake ... --out ...
On a cluster, ship the package: zip -r mirrorplane.zip replication; spark-submit --py-files mirrorplane.zip ...
`prune --lake URI --retention-hours H` applies the lake's retention instead of running a job.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

JOB_NAMES = ("latency", "topology", "audit")


def _time(text: str) -> datetime:
    """ISO 8601 (`2026-11-22T05:00`, UTC unless it says otherwise) or epoch milliseconds."""
    if text.isdigit():
        return datetime.fromtimestamp(int(text) / 1000, UTC)
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m replication.analytics", description=__doc__)
    parser.add_argument("job", choices=[*JOB_NAMES, "prune"])
    parser.add_argument("--lake", required=True, help="facts lake: a directory or Hadoop URI (s3a://, hdfs://)")
    parser.add_argument("--out", help="where the JSON summary and Parquet detail go (required for jobs)")
    parser.add_argument("--since", type=_time, help="window start, inclusive (ISO 8601 or epoch ms)")
    parser.add_argument("--until", type=_time, help="window end, exclusive (ISO 8601 or epoch ms)")
    parser.add_argument("--master", help="Spark master URL (default: spark-submit's, else local[*])")
    parser.add_argument("--flows", help="topology: configured flows, comma-separated a->b (default: registered)")
    parser.add_argument("--window-minutes", type=int, default=10, help="audit: tumbling window (minutes)")
    parser.add_argument("--late-after-ms", type=int, default=60_000, help="audit: lateness allowed after a window")
    parser.add_argument("--lookback-minutes", type=int, default=60, help="audit: facts read before --since")
    parser.add_argument("--dead-after", type=float, default=5.0, help="topology: heartbeat intervals before dead")
    parser.add_argument(
        "--collection-lag-s", type=float, default=60.0, help="topology: how far heartbeat arrivals may trail --until"
    )
    parser.add_argument("--retention-hours", type=float, help="prune: keep this many hours")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if args.job == "prune":
        if args.retention_hours is None:
            print("error: prune needs --retention-hours", file=sys.stderr)
            return 2
        from replication.facts.lake import prune

        removed = prune(args.lake, datetime.now(UTC) - timedelta(hours=args.retention_hours))
        print(json.dumps({"removed_partitions": removed}))
        return 0
    if not args.out:
        print("error: --out is required", file=sys.stderr)
        return 2
    from replication.analytics.jobs import run_job

    flows = [f.strip() for f in args.flows.split(",") if f.strip()] if args.flows else None
    options = {
        "flows": flows,
        "window_minutes": args.window_minutes,
        "late_after_ms": args.late_after_ms,
        "dead_after": args.dead_after,
        "lookback_minutes": args.lookback_minutes,
        "collection_lag_s": args.collection_lag_s,
    }
    try:
        summary = run_job(args.job, args.lake, args.out, args.since, args.until, args.master, **options)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
