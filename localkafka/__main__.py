"""CLI: python -m localkafka {up,status,down}."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from localkafka.cluster import DEFAULT_BROKER_HEAP
from localkafka.dist import LocalKafkaError
from localkafka.manager import DEFAULT_ALIASES, LocalKafka
from replication.mm2.policy import PolicyError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m localkafka", description=__doc__)
    parser.add_argument(
        "--state-dir",
        type=Path,
        default=Path(os.environ.get("MIRRORPLANE_KAFKA_STATE_DIR", "var/localkafka")),
        help="where data dirs, logs and state.json live (default: var/localkafka)",
    )
    parser.add_argument("--port-base", type=int, default=19092, help="first broker port (default 19092)")
    parser.add_argument("--zk-port-base", type=int, default=12181, help="first ZooKeeper port (default 12181)")
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up", help="start clusters and wait until each answers an admin call")
    up.add_argument("--clusters", default=",".join(DEFAULT_ALIASES), help="comma-separated aliases")
    up.add_argument("--timeout", type=float, default=120.0)
    up.add_argument(
        "--broker-heap",
        default=DEFAULT_BROKER_HEAP,
        help=f"each broker's Java heap, e.g. 1g (default {DEFAULT_BROKER_HEAP})",
    )
    sub.add_parser("status", help="show the recorded clusters and whether they answer")
    down = sub.add_parser("down", help="stop exactly the processes that up started")
    down.add_argument("--purge", action="store_true", help="also delete the data directories")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    heap = getattr(args, "broker_heap", DEFAULT_BROKER_HEAP)  # only `up` starts brokers
    kafka = LocalKafka(args.state_dir, args.port_base, args.zk_port_base, broker_heap=heap)
    try:
        if args.command == "up":
            aliases = [a.strip() for a in args.clusters.split(",") if a.strip()]
            for alias, bootstrap in kafka.up(aliases, timeout=args.timeout).items():
                print(f"{alias}={bootstrap}")
            print(f"# state: {kafka.state_dir / 'state.json'}", file=sys.stderr)
        elif args.command == "status":
            for s in kafka.status():
                state = "ready" if s.broker_ready else ("starting" if s.broker_running else "stopped")
                print(f"{s.alias}={s.bootstrap} broker={state} zookeeper={'up' if s.zookeeper_running else 'down'}")
        else:
            kafka.down(purge=args.purge)
    except (LocalKafkaError, PolicyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
