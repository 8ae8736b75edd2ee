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
from typing import Any

from replication.analytics.options import JOB_NAMES, OPTIONS, Option


def _time(text: str) -> datetime:
    """ISO 8601 (`2026-11-22T05:00`, UTC unless it says otherwise) or epoch milliseconds."""
    if text.isdigit():
        return datetime.fromtimestamp(int(text) / 1000, UTC)
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _flows(text: str) -> list[str]:
    return [f.strip() for f in text.split(",") if f.strip()]


_PARSE: dict[str, Any] = {"int": int, "float": float, "flows": _flows}


def _help(option: Option) -> str:
    flows = ", comma-separated" if option.kind == "flows" else f" (default {option.default})"
    return f"{'/'.join(option.jobs)}: {option.help}{flows}"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m replication.analytics", description=__doc__)
    parser.add_argument("job", choices=[*JOB_NAMES, "prune"])
    parser.add_argument("--lake", required=True, help="facts lake: a directory or Hadoop URI (s3a://, hdfs://)")
    parser.add_argument("--out", help="where the JSON summary and Parquet detail go (required for jobs)")
    parser.add_argument("--since", type=_time, help="window start, inclusive (ISO 8601 or epoch ms)")
    parser.add_argument("--until", type=_time, help="window end, exclusive (ISO 8601 or epoch ms)")
    parser.add_argument("--master", help="Spark master URL (default: spark-submit's, else local[*])")
    for option in OPTIONS.values():  # declared in replication.analytics.options; left out: the option's default
        parser.add_argument(f"--{option.name.replace('_', '-')}", type=_PARSE[option.kind], help=_help(option))
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

    options = {name: value for name in OPTIONS if (value := getattr(args, name)) is not None}
    try:
        summary = run_job(args.job, args.lake, args.out, args.since, args.until, args.master, **options)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
