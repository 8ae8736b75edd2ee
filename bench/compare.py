"""`make bench`: Mirrorplane side by side with Kafka's MirrorMaker on the same brokers and data, runs alternating.

1. Throughput: the same preloaded records (100 B and 1 KiB by default) copied into an empty target topic by each
   replicator in turn (mm2, mp-alo, mm2-eos, mp-eos, loop, mm2, ...), for --rounds rounds; ratios are taken per
   pair, with their min-max interval (bench/ratios.py). MirrorMaker 1 (`mm`) joins on Kafka 2.3.0 brokers only.
2. Latency at a fixed moderate load (bench/latency.py explains the method).
3. Scaling: the engine at least once with 1, 2 and 4 tasks (processes) on the small-record data.
4. Kills: each of mm2, mm2-eos, mp-alo and mp-eos copies the small-record data while SIGKILLed 3 times, then the
   duplicates and lost records at the target are counted by key (bench/kills.py explains the method).
5. Pickup: mm2 and mp-alo running on a topic pattern; the time to copy the first record of a topic created then, at
   each --pickup-refresh (bench/pickup.py).
6. Failover: a consumer group moved to the target by mm2's and by mp-alo's checkpoints: records read again and
   skipped (bench/failover.py).
0. Limits: Kafka's ProducerPerformance and ConsumerPerformance on the same brokers and data (bench/limits.py): the
   ceiling each replicator's steady rate is set against. --no-limits skips it.
Figures go to stdout and to bench/results/<timestamp>.json (also bench/results/latest.json).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from typing import Any

from bench import ratios, report
from bench.clusters import bench_clusters
from bench.failover import FailoverResult, run_failover
from bench.kills import KillResult, run_kills
from bench.latency import LatencyResult, run_latency
from bench.limits import LimitResult, closeness, run_limit
from bench.pickup import PickupResult, run_pickup
from bench.preload import Dataset, ensure_dataset
from bench.replicators import REPLICATORS, MirrorMaker2, Mirrorplane, Replicator
from bench.session import Session
from bench.throughput import ThroughputResult, run_throughput
from replication.task.ownership import PlannedOwner

STREAM_WIDTH = 10  # tables printed a row per run


def _csv(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bench", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add = parser.add_argument
    add("--records-small", type=int, default=2_000_000, help="records in the small-record data set")
    add("--size-small", type=int, default=100, help="value bytes of a small record")
    add("--records-large", type=int, default=500_000, help="records in the large-record data set")
    add("--size-large", type=int, default=1024, help="value bytes of a large record")
    add("--partitions", type=int, default=8)
    add("--rounds", type=int, default=2, help="throughput rounds; each round runs every replicator once")
    add("--replicators", type=_csv, help=f"of {', '.join(REPLICATORS)} (default: by Kafka version, see below)")
    add("--latency-rate", type=int, default=20_000, help="records/s of the fixed load")
    add("--latency-seconds", type=float, default=30, help="measured seconds of fixed load (0: no latency runs)")
    add("--latency-warmup", type=float, default=10, help="seconds of load before measuring (JIT, caches)")
    add("--latency-rounds", type=int, default=2, help="latency rounds; each runs every latency replicator once")
    add("--latency-replicators", type=_csv)
    add("--scaling-tasks", type=_csv, default=["1", "2", "4"], help="task counts for the scaling run ('' skips)")
    add("--kills", type=int, default=3, help="SIGKILLs per copy in the kills phase (0: no kills phase)")
    add("--kill-replicators", type=_csv, help="replicators of the kills phase")
    add(
        "--verify",
        choices=["none", "eos", "all"],
        default="eos",
        help="count the target's records after a run, off the clock (eos: where completion came from positions)",
    )
    add(
        "--pickup-refresh",
        type=_csv,
        default=["default", "10"],
        help="refresh.topics.interval.seconds of the pickup runs ('default': unset; '' skips the phase)",
    )
    add("--pickup-replicators", type=_csv, default=["mm2", "mp-alo"])
    add("--failover-replicators", type=_csv, default=["mm2", "mp-alo"], help="'' skips the failover phase")
    add("--keep-clusters", action="store_true", help="leave our own bench clusters running afterwards")
    add("--no-limits", dest="limits", action="store_false", help="skip the perf tools' ceiling (phase 0)")
    return parser


# Alternation order: each Mirrorplane mode right after MirrorMaker 2 in the same guarantee, so a pair is adjacent.
DEFAULTS = {
    "replicators": ["mm2", "mp-alo", "mm2-eos", "mp-eos", "loop"],
    "latency_replicators": ["mm2", "mp-alo", "mm2-eos", "mp-eos"],
    "kill_replicators": ["mm2", "mp-alo", "mm2-eos", "mp-eos"],
}
LEGACY_KAFKA = "2.3.0"  # the last Kafka whose distribution has MirrorMaker 1 (kafka.tools.MirrorMaker)


def default_replicators(phase: str, kafka_version: str) -> list[str]:
    """The replicators of a phase when not given: MirrorMaker 1 leads only on brokers of a Kafka that still has it."""
    names = list(DEFAULTS[phase])
    return ["mm", *names] if kafka_version == LEGACY_KAFKA else names


def resolve_defaults(args: argparse.Namespace, kafka_version: str) -> None:
    for phase in DEFAULTS:
        if getattr(args, phase) is None:
            setattr(args, phase, default_replicators(phase, kafka_version))


def latency_replicator(name: str) -> Replicator:
    """The latency runs' replicator: MirrorMaker 2 with Kafka's default batching (bench/mm2props.py says why)."""
    if name in ("mm2", "mm2-eos"):
        return MirrorMaker2(exactly_once=name == "mm2-eos", latency=True)
    return REPLICATORS[name]()


def run_limits(session: Session, args: argparse.Namespace, data: Sequence[Dataset]) -> list[LimitResult]:
    if not args.limits:
        return []
    print("\n## What the brokers move here (kafka-consumer-perf-test, kafka-producer-perf-test)\n")
    results = []
    for dataset in data:
        ctx = session.context()
        limit = run_limit(ctx.clusters.source, ctx.clusters.target, dataset, ctx.workdir)
        results.append(limit)
        print(
            f"  {dataset.label}: consume {limit.consume_records_per_s:,.0f} records/s, produce "
            f"{limit.produce_records_per_s:,.0f} records/s, a copy's ceiling {limit.copy_records_per_s:,.0f} records/s"
        )
    return results


def _steady_medians(throughput: Sequence[ThroughputResult]) -> dict[tuple[str, str], float]:
    return {(s["dataset"], s["replicator"]): s["steady_records_per_s"] for s in report.throughput_summary(throughput)}


def print_closeness(shares: Sequence[dict[str, Any]]) -> None:
    if shares:
        rows = [[s["dataset"], s["replicator"], f"{100 * s['share_of_ceiling']:.0f} %"] for s in shares]
        print("\n## Steady records/s as a share of the copy's ceiling\n")
        print(report.table(["data", "replicator", "of the ceiling"], rows, 2))


def run_throughput_rounds(
    session: Session, args: argparse.Namespace, data: Sequence[Dataset]
) -> list[ThroughputResult]:
    if args.rounds <= 0:
        return []
    print("\n## Throughput (same data, alternating runs)\n")
    print(report.table(report.THROUGHPUT_HEADERS, [], 3, STREAM_WIDTH))
    results = []
    for round_no in range(1, args.rounds + 1):
        for dataset in data:
            for name in args.replicators:
                verify = args.verify == "all" or (args.verify == "eos" and "eos" in name)
                result = run_throughput(REPLICATORS[name](), session.context(), dataset, round_no, verify)
                _check_verified(result)
                results.append(result)
                row = report.throughput_row(result)
                print(report.table(report.THROUGHPUT_HEADERS, [row], 3, STREAM_WIDTH).splitlines()[-1])
    return results


def _check_verified(result: ThroughputResult) -> None:
    if result.verified is not None and result.verified != result.records:
        print(f"  !! {result.replicator}: the target holds {result.verified:,} records, expected {result.records:,}")


def run_latency_rounds(session: Session, args: argparse.Namespace) -> list[LatencyResult]:
    if args.latency_seconds <= 0:
        return []
    print(
        f"\n## Latency at {args.latency_rate:,} records/s for {args.latency_seconds:g}s "
        f"(after {args.latency_warmup:g}s warm-up)\n"
    )
    print(report.table(report.LATENCY_HEADERS, [], 2, STREAM_WIDTH))
    results = []
    for round_no in range(1, args.latency_rounds + 1):
        for name in args.latency_replicators:
            load = (args.latency_rate, args.latency_seconds, args.latency_warmup, args.size_small, args.partitions)
            result = run_latency(latency_replicator(name), session.context(), round_no, *load)
            results.append(result)
            row = report.latency_row(result)
            print(report.table(report.LATENCY_HEADERS, [row], 2, STREAM_WIDTH).splitlines()[-1])
    return results


def run_scaling(session: Session, args: argparse.Namespace, dataset: Dataset) -> list[dict[str, Any]]:
    if not args.scaling_tasks:
        return []
    print(f"\n## Scaling: mp-alo with 1..n tasks on {dataset.count:,} x {dataset.label}\n")
    rows: list[dict[str, Any]] = []
    for tasks in (int(t) for t in args.scaling_tasks):
        result = run_throughput(Mirrorplane(tasks=tasks), session.context(), dataset, 1)
        owners = [PlannedOwner({dataset.topic: dataset.partitions}, tasks, t) for t in range(tasks)]
        shares = [sum(owner(dataset.topic, p) for p in range(dataset.partitions)) for owner in owners]
        base = rows[0]["records_per_s"] if rows else result.records_per_s
        rows.append(
            {
                "tasks": tasks,
                "partitions_per_task": shares,
                **result.as_dict(),
                "speedup": round(result.records_per_s / base, 2),
            }
        )
        print(
            f"  {tasks} task(s), partitions per task {shares}: {result.records_per_s:,} records/s "
            f"(steady {result.steady_records_per_s:,}), {result.cpu_s_per_m} CPU s/M records"
        )
    return rows


def run_kill_phase(session: Session, args: argparse.Namespace, dataset: Dataset) -> list[KillResult]:
    if args.kills <= 0:
        return []
    print(f"\n## Kills: {dataset.count:,} x {dataset.label} copied with {args.kills} SIGKILLs on the way\n")
    print(report.table(KILL_HEADERS, [], 1, STREAM_WIDTH))
    results = []
    for name in args.kill_replicators:
        result = run_kills(REPLICATORS[name](), session.context(), dataset, args.kills)
        results.append(result)
        print(report.table(KILL_HEADERS, [_kill_row(result)], 1, STREAM_WIDTH).splitlines()[-1])
    return results


def run_pickup_phase(session: Session, args: argparse.Namespace) -> list[PickupResult]:
    if not args.pickup_refresh or not args.pickup_replicators:
        return []
    print("\n## Pickup: seconds from a new topic's first record to its copy at the target\n")
    results = []
    for refresh in args.pickup_refresh:
        for name in args.pickup_replicators:
            result = run_pickup(name, session.context(), None if refresh == "default" else float(refresh))
            results.append(result)
            print(_pickup_line(result))
    return results


def _pickup_line(r: PickupResult) -> str:
    refresh = "default refresh" if r.refresh_s is None else f"refresh {r.refresh_s:g} s"
    taken = f"{r.pickup_s:.1f} s" if r.pickup_s is not None else f"not picked up in {r.deadline_s:.0f} s"
    return f"  {r.replicator}, {refresh}: {taken}"


def run_failover_phase(session: Session, args: argparse.Namespace, dataset: Dataset) -> list[FailoverResult]:
    if not args.failover_replicators:
        return []
    print(f"\n## Failover: a group moved by the checkpoints after a copy of {dataset.count:,} x {dataset.label}\n")
    print(report.table(FAILOVER_HEADERS, [], 1, STREAM_WIDTH))
    results = []
    for name in args.failover_replicators:
        result = run_failover(name, session.context(), dataset)
        results.append(result)
        print(report.table(FAILOVER_HEADERS, [_failover_row(result)], 1, STREAM_WIDTH).splitlines()[-1])
    return results


FAILOVER_HEADERS = ["replicator", "partitions", "exact", "untranslated", "read again", "skipped", "seconds"]


def _failover_row(r: FailoverResult) -> list[Any]:
    return [
        r.replicator,
        r.partitions,
        r.exact_partitions,
        r.untranslated_partitions,
        r.read_again,
        r.skipped,
        r.seconds,
    ]


KILL_HEADERS = ["replicator", "records", "kills", "at target", "duplicates", "lost", "seconds"]


def _kill_row(r: KillResult) -> list[Any]:
    return [r.replicator, r.records, r.kills, r.target_records, r.duplicates, r.lost, r.seconds]


def print_vs_mm2(vs: dict[str, Any]) -> None:
    """Each ratio to MirrorMaker 2 with its interval: median [min-max] over n pairs, and the pairs +-5 % would take."""
    if not vs["throughput"] and not vs["latency"]:
        return
    print("\n## Mirrorplane / MirrorMaker 2 (median [min-max] of the pair ratios, n pairs)\n")
    rows = [
        [
            t["dataset"],
            f"{t['replicator']} / {t['vs']}",
            *(ratios.interval_text(t[f]) for f in ratios.THROUGHPUT_FIELDS),
        ]
        for t in vs["throughput"]
    ]
    print(report.table(["data", "pair", "records/s", "steady rec/s", "CPU/record", "peak RSS"], rows, 2))
    for name, lat in vs["latency"].items():
        p50, p99 = (ratios.interval_text(lat[f]) for f in ratios.LATENCY_FIELDS)
        print(f"\n{name} / {lat['vs']} latency: p50 {p50}; p99 {p99}")


SCALING_HEADERS = ["tasks", "partitions per task", "records/s", "steady rec/s", "CPU s/M rec", "speedup"]


def print_summary(
    throughput: list[ThroughputResult],
    latency: list[LatencyResult],
    scaling: list[dict[str, Any]],
    checks: list[dict[str, Any]],
    kills: list[KillResult],
    pickups: list[PickupResult],
    failovers: list[FailoverResult],
) -> None:
    print("\n## Summary (medians; ratios per alternating pair, median first)\n")
    if throughput:
        print(report.summary_table(report.throughput_summary(throughput)))
    for name, vs in report.latency_ratios(latency).items():
        print(f"\n{name} latency vs mm (medians): p50 {vs['p50_ms_vs_mm']:.2f}x, p99 {vs['p99_ms_vs_mm']:.2f}x")
    print_vs_mm2(ratios.vs_mm2(throughput, latency))
    if scaling:
        print(
            "\n"
            + report.table(
                SCALING_HEADERS,
                (
                    [
                        s["tasks"],
                        "/".join(map(str, s["partitions_per_task"])),
                        s["records_per_s"],
                        s["steady_records_per_s"],
                        s["cpu_s_per_m"],
                        s["speedup"],
                    ]
                    for s in scaling
                ),
            )
        )
    if kills:
        print("\n" + report.table(KILL_HEADERS, [_kill_row(k) for k in kills], 1))
    if pickups:
        print("\nPickup of a new topic:\n" + "\n".join(_pickup_line(p) for p in pickups))
    if failovers:
        print("\n" + report.table(FAILOVER_HEADERS, [_failover_row(f) for f in failovers], 1))
    if checks:
        print("\n## Mirrorplane's targets\n\n" + report.targets_table(checks))


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    started = time.monotonic()
    data = [
        Dataset(args.records_small, args.size_small, args.partitions),
        Dataset(args.records_large, args.size_large, args.partitions),
    ]
    with bench_clusters(keep=args.keep_clusters) as clusters:
        session = Session(clusters)
        stamp = session.stamp
        print(f"# Mirrorplane bench {stamp}: source {clusters.source}, target {clusters.target}")
        resolve_defaults(args, clusters.kafka_version)
        before = report.machine()
        for dataset in data:
            ensure_dataset(clusters.source, dataset)
        limits = run_limits(session, args, data)
        throughput = run_throughput_rounds(session, args, data)
        latency = run_latency_rounds(session, args)
        scaling = run_scaling(session, args, data[0])
        kills = run_kill_phase(session, args, data[0])
        pickups = run_pickup_phase(session, args)
        failovers = run_failover_phase(session, args, data[0])
    checks = report.target_checks(throughput, latency, data[0].label, data[1].label)
    print_summary(throughput, latency, scaling, checks, kills, pickups, failovers)
    print_closeness(closeness(_steady_medians(throughput), limits))
    document = {
        "stamp": stamp,
        "elapsed_s": round(time.monotonic() - started),
        "kafka": clusters.kafka_version,
        "machine": before,
        "loadavg_after": report.machine()["loadavg"],
        "settings": vars(args),
        "throughput": [r.as_dict() for r in throughput],
        "summary": report.throughput_summary(throughput),
        "latency": [r.as_dict() for r in latency],
        "latency_vs_mm": report.latency_ratios(latency),
        "vs_mm2": ratios.vs_mm2(throughput, latency),
        "limits": [limit.as_dict() for limit in limits],
        "share_of_ceiling": closeness(_steady_medians(throughput), limits),
        "scaling": scaling,
        "kills": [k.as_dict() for k in kills],
        "pickup": [p.as_dict() for p in pickups],
        "failover": [f.as_dict() for f in failovers],
        "targets": checks,
    }
    # latest.json, the result git keeps, is a run that compared throughput; a run of other phases alone is not.
    saved = report.save(document, stamp, latest=bool(throughput))
    print(f"\nwrote {saved} in {document['elapsed_s']}s")
    return 0
