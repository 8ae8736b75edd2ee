"""python -m replication: run flows from an MM2-style properties file, take over from MirrorMaker 2, and translate
offsets."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from replication.cli import offsets, takeover
from replication.config import ConfigError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m replication", description=__doc__)
    parser.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run every enabled flow of an MM2 properties file until SIGTERM")
    run.add_argument("--config", type=Path, required=True, help="MM2-style properties file (clusters = a, b ...)")
    run.add_argument(
        "--accept-data-loss",
        action="store_true",
        help="after a reported retention gap or recreated topic, resume at the source log start instead of stopping",
    )
    run.add_argument(
        "--processes",
        type=_positive,
        metavar="N",
        help="share N processes among all tasks, as threads, instead of one process per task: memory then stays "
        "flat as idle flows are added (default: one process per task)",
    )
    run.add_argument("--take-over-from-mm2", action="store_true", help=takeover.TAKEOVER_HELP)
    takeover.add_parser(sub, Path)
    offsets.add_parser(sub, Path)
    return parser


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, not {text!r}")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=args.log_level, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    from replication.cli.runner import StartupStopped, StopSignals, run_flows
    from replication.config.mm2properties import load_file

    signals = StopSignals() if args.command == "run" else None
    try:
        flows = load_file(args.config)
    except StartupStopped:
        return 0
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: --config: {exc}", file=sys.stderr)
        return 2
    if args.command == "offsets":
        flow = offsets.find_flow(flows, args.source, args.target)
        if flow is None:
            print(f"error: --config defines no flow {args.source}->{args.target}", file=sys.stderr)
            return 2
        return offsets.translate(flow, args.group, args.format, origin=args.origin)
    if args.command == "takeover" or args.take_over_from_mm2:
        try:
            code = takeover.take_over(flows)
        except StartupStopped:
            return 0
        if code or args.command == "takeover":
            return code
    if args.accept_data_loss:
        flows = [flow.replace(on_data_loss="continue") for flow in flows]
    return run_flows(flows, processes=args.processes, signals=signals)


if __name__ == "__main__":
    sys.exit(main())
