"""Mirrorplane's engine alone: throughput on N preloaded records, then latency at a fixed load.

    .venv/bin/python -m bench.engine_throughput --records 1000000 --size 100 --partitions 8 [--exactly-once]

N records are preloaded once into a source topic on two local Kafka clusters (our own, 4.x by default, on ports 21092+,
state in var/bench-kafka; or running ones named by BENCH_CLUSTERS=src=host:port,dst=host:port). The engine runs as
`python -m replication run --config ...` in a child process until the target holds all N records; CPU is the
child tree's (see bench/procs.py). Latency is measured separately at --rate records/s (see bench/latency.py).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from bench import profiling, report
from bench.clusters import bench_clusters
from bench.latency import LatencyResult, run_latency
from bench.preload import Dataset, ensure_dataset
from bench.replicators import Mirrorplane
from bench.session import Session
from bench.throughput import ThroughputResult, run_throughput


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench.engine_throughput",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--size", type=int, default=100, help="value bytes per record")
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--exactly-once", action="store_true")
    parser.add_argument("--tasks", type=int, default=1, help="tasks.max: task processes")
    parser.add_argument("--processes", type=int, help="the runner's --processes: tasks share N processes as threads")
    parser.add_argument(
        "--property",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a further flow property, e.g. transaction.boundary.interval.ms=500 (repeatable)",
    )
    parser.add_argument("--rounds", type=int, default=1, help="throughput runs")
    parser.add_argument("--rate", type=int, default=20_000, help="records/s of the latency run")
    parser.add_argument("--latency-seconds", type=float, default=20, help="measured seconds (0: no latency run)")
    parser.add_argument("--latency-warmup", type=float, default=5)
    parser.add_argument("--no-verify", action="store_true", help="do not count the target's records afterwards")
    parser.add_argument("--keep-clusters", action="store_true")
    parser.add_argument("--profile", type=Path, help="py-spy the engine during throughput runs; collapsed stacks here")
    return parser


def print_throughput(result: ThroughputResult) -> None:
    print(
        f"throughput: {result.records:,} x {result.dataset} in {result.seconds:.2f}s = {result.records_per_s:,} "
        f"records/s, {result.mb_per_s} MB/s (steady, from the first record: {result.steady_records_per_s:,}/s); "
        f"CPU {result.cpu_s_per_m} s per million records (steady {result.steady_cpu_s_per_m}); "
        f"RSS {result.peak_rss_mb:g} MB; target holds {result.verified if result.verified is not None else '?'}"
    )


def print_latency(result: LatencyResult) -> None:
    print(
        f"latency at {result.rate:,} records/s over {result.measured:,} records: p50 {result.p50_ms} ms, "
        f"p90 {result.p90_ms} ms, p99 {result.p99_ms} ms, p99.9 {result.p999_ms} ms, max {result.max_ms} ms; "
        f"CPU {result.cpu_pct}% of a core ({result.cpu_s_per_m} s per million records); "
        f"lost {result.produced - result.received}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    dataset = Dataset(args.records, args.size, args.partitions)
    properties = dict(item.split("=", 1) for item in args.property)
    engine = Mirrorplane(
        exactly_once=args.exactly_once, tasks=args.tasks, properties=properties, processes=args.processes
    )
    with bench_clusters(keep=args.keep_clusters) as clusters:
        ensure_dataset(clusters.source, dataset)
        session = Session(clusters)
        print(f"# {engine.name} on {clusters.source} -> {clusters.target}")
        runs = []
        for round_no in range(1, args.rounds + 1):
            context, profile = session.context(), args.profile
            if profile is not None and args.rounds > 1:
                profile = profile.with_name(f"{profile.stem}-{round_no}{profile.suffix}")
            runs.append(run_throughput(engine, context, dataset, round_no, not args.no_verify, profile))
            print_throughput(runs[-1])
            if profile is not None:
                print(profiling.summarize(profile))
        latency = None
        if args.latency_seconds > 0:
            load = (args.rate, args.latency_seconds, args.latency_warmup, args.size, args.partitions)
            latency = run_latency(engine, session.context(), 1, *load)
            print_latency(latency)
    document = {
        "machine": report.machine(),
        "kafka": clusters.kafka_version,
        "settings": vars(args),
        "throughput": [r.as_dict() for r in runs],
        "latency": latency and latency.as_dict(),
    }
    print(f"wrote {report.save(document, f'engine-{session.stamp}', latest=False)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
