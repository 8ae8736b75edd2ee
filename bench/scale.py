"""`make bench-scale`: the standalone runner on one flow of 1k, 3k and 10k partitions, so growth shows.

For each size: N topics of 10 partitions are created and preloaded, and `python -m replication run` starts on a
fresh source alias (no positions, no remote topics), with tasks.max tasks. Figures per size:
- catch-up: seconds from the runner's launch until the target holds every record (remote topics created, every
  partition assigned and copied);
- pickup: 100 new partitions (10 topics of 10) created while it runs: seconds from their creation until their records
  are at the target, against refresh.topics.interval.seconds + 10 s;
- idle CPU: the runner's process tree's CPU over 10 s of no traffic, as % of one core; then again with MM2's default
  refresh.topics.interval.seconds (600), the runner restarted on its positions and settled for 15 s, over 30 s;
- memory: the tree's peak RSS, and per 1,000 partitions;
- ERROR lines in the runner's log.
Then, for --idle-flows counts N: N flows of one topic each (10 partitions, tasks.max 1), caught up, then 10 s idle:
the runner tree's proportional set size (shared pages counted once) per flow, and its idle CPU.
The bench prints figures; it never fails on one.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path

from confluent_kafka import KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import NewTopic, OffsetSpec

from bench.clusters import bench_clusters
from bench.kafkaops import BenchError, admin, wait_for
from bench.procs import Child, process_tree, tree_cpu_seconds, tree_peak_rss_mb, tree_pss_mb
from replication.kafka.positions import positions_topic

PARTITIONS_PER_TOPIC = 10
REFRESH_SECONDS = 5
DEFAULT_REFRESH_SECONDS = 600  # MM2's and Mirrorplane's default
REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class ScaleFigures:
    partitions: int
    topics: int
    records: int
    topics_created_s: float
    catch_up_s: float
    pickup_s: float
    pickup_after_created_s: float  # from when the source's metadata lists every new partition
    pickup_goal_s: float
    idle_cpu_pct: float
    idle_cpu_default_refresh_pct: float
    peak_rss_mb: float
    rss_mb_per_1k_partitions: float
    error_lines: int


@dataclass
class IdleFlowFigures:
    """N flows of one topic each, caught up and idle: what each idle flow costs the standalone runner."""

    flows: int
    shared_by: int  # the runner's --processes (0: one process per task)
    processes: int
    pss_mb: float  # the runner's tree, proportional set size after 10 s idle (shared pages counted once)
    pss_mb_per_flow: float
    idle_cpu_pct: float


def _create(bootstrap: str, topics: list[str]) -> float:
    """Create the topics in batches of 100; seconds until their metadata shows every partition."""
    started = time.monotonic()
    client = admin(bootstrap)
    for i in range(0, len(topics), 100):
        batch = [NewTopic(t, PARTITIONS_PER_TOPIC, 1) for t in topics[i : i + 100]]
        for future in client.create_topics(batch, request_timeout=120, operation_timeout=120).values():
            future.result(timeout=120)
    wait_for(lambda: _all_present(bootstrap, topics), 300, "source topic metadata", interval=1)
    return time.monotonic() - started


def _drop(bootstrap: str, topics: list[str], wait: bool) -> None:
    """Delete a measurement's topics; with wait, until gone, so the next size meets brokers as empty as this one did
    (partitions left on a broker slow its topic creation: a 10k rerun timed out creating topics beside 14k leftover
    partitions). A deletion still running after 15 minutes is reported, not raised."""
    client = admin(bootstrap)
    doomed = [t for t in topics if t in client.list_topics(timeout=30).topics]
    for i in range(0, len(doomed), 100):
        for future in client.delete_topics(doomed[i : i + 100], request_timeout=120).values():
            try:
                future.result(timeout=120)
            except KafkaException as exc:
                # Kafka 2.3 answers REQUEST_TIMED_OUT while it still deletes thousands of partitions (a 3k run's
                # cleanup did), or does not answer within the client's timeout (a 10k run's did, _TIMED_OUT): the
                # deletion goes on, and the wait below sees it end.
                if exc.args[0].code() not in (KafkaError.REQUEST_TIMED_OUT, KafkaError._TIMED_OUT):
                    raise
    if not wait:
        return
    try:
        wait_for(lambda: not set(doomed) & set(client.list_topics(timeout=30).topics), 900, "topic deletion", 2)
    except BenchError as exc:
        print(f"warning: {exc}; the next measurement meets a broker still deleting topics", file=sys.stderr)


def _all_present(bootstrap: str, topics: list[str]) -> bool:
    listed = admin(bootstrap).list_topics(timeout=30).topics
    return all(t in listed and len(listed[t].partitions) == PARTITIONS_PER_TOPIC for t in topics)


def _produce(bootstrap: str, topics: list[str], per_partition: int) -> int:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "queue.buffering.max.messages": 1_000_000})
    sent = 0
    for topic in topics:
        for partition in range(PARTITIONS_PER_TOPIC):
            for seq in range(per_partition):
                producer.produce(topic, f"{topic}-{partition}-{seq}".encode().ljust(100, b"x"), partition=partition)
                sent += 1
            producer.poll(0)
    if producer.flush(120) != 0:
        raise BenchError("preload not acknowledged")
    return sent


def _target_total(bootstrap: str, remotes: list[str]) -> int:
    """Records at the target over these remote topics (0 for one that does not exist yet), one ListOffsets call."""
    client = admin(bootstrap)
    listed = client.list_topics(timeout=30).topics
    request = {
        TopicPartition(t, p): OffsetSpec.latest()  # type: ignore[no-untyped-call]
        for t in remotes
        if t in listed
        for p in range(len(listed[t].partitions))
    }
    if not request:
        return 0
    return sum(int(f.result(timeout=60).offset) for f in client.list_offsets(request, request_timeout=60).values())


def _config(
    path: Path, alias: str, src: str, dst: str, pattern: str, tasks: int, refresh: int = REFRESH_SECONDS
) -> Path:
    path.write_text(
        f"clusters = {alias}, dst\n"
        f"{alias}.bootstrap.servers = {src}\n"
        f"dst.bootstrap.servers = {dst}\n"
        f"{alias}->dst.enabled = true\n"
        f"{alias}->dst.topics = {pattern}\n"
        f"tasks.max = {tasks}\n"
        f"refresh.topics.interval.seconds = {refresh}\n"
        "emit.checkpoints.enabled = false\n"
        "sync.group.offsets.enabled = false\n"
    )
    return path


def measure(
    src: str, dst: str, partitions: int, tasks: int, per_partition: int, out: Path, cleanup: list[tuple[str, list[str]]]
) -> ScaleFigures:
    """One size's figures; the topics to delete afterwards go to cleanup (deletion is left to the caller: at 10k
    partitions Kafka 2.3 takes minutes)."""
    run = uuid.uuid4().hex[:6]
    prefix = f"scale{partitions}-{run}"
    topics = [f"{prefix}-{i:04d}" for i in range(partitions // PARTITIONS_PER_TOPIC)]
    created_s = _create(src, topics)
    records = _produce(src, topics, per_partition)
    alias = f"s{run}"
    config = _config(out / f"scale-{partitions}.properties", alias, src, dst, f"{prefix}-.*", tasks)
    log = out / f"scale-{partitions}.log"
    child = _runner(config, log)
    remotes = [f"{alias}.{t}" for t in topics]
    new = [f"{prefix}-new-{i}" for i in range(10)]
    new_remotes = [f"{alias}.{t}" for t in new]
    try:
        _wait_caught_up(child, dst, remotes, records, 1800)
        catch_up = time.monotonic() - child.started
        idle_cpu = _idle_cpu_pct(child)

        added = time.monotonic()
        _create(src, new)
        created = time.monotonic()
        more = _produce(src, new, per_partition)
        wait_for(lambda: _target_total(dst, new_remotes) >= more, 600, "pickup", 0.5)
        pickup, pickup_after_created = time.monotonic() - added, time.monotonic() - created
        rss = tree_peak_rss_mb(child.pid)
        child.stop()
        config = _config(
            out / f"scale-{partitions}-default.properties",
            alias,
            src,
            dst,
            f"{prefix}-.*",
            tasks,
            DEFAULT_REFRESH_SECONDS,
        )
        log_default = out / f"scale-{partitions}-default.log"
        child = _runner(config, log_default)
        _wait_caught_up(child, dst, remotes + new_remotes, records + more, 600)
        time.sleep(15)  # the restarted tasks' start-up is not idleness
        idle_default = _idle_cpu_pct(child, 30)
    finally:
        child.stop()
        cleanup.extend([(src, topics + new), (dst, [*remotes, *new_remotes, positions_topic(alias)])])
    lines = [line for path in (log, log_default) for line in path.read_text(errors="replace").splitlines()]
    errors = [line for line in lines if " ERROR " in line]
    return ScaleFigures(
        partitions=partitions,
        topics=len(topics),
        records=records,
        topics_created_s=round(created_s, 1),
        catch_up_s=round(catch_up, 1),
        pickup_s=round(pickup, 1),
        pickup_after_created_s=round(pickup_after_created, 1),
        pickup_goal_s=REFRESH_SECONDS + 10,
        idle_cpu_pct=round(idle_cpu, 1),
        idle_cpu_default_refresh_pct=round(idle_default, 1),
        peak_rss_mb=round(rss, 1),
        rss_mb_per_1k_partitions=round(rss / (partitions / 1000), 1),
        error_lines=len(errors),
    )


def _runner(config: Path, log: Path, extra: list[str] | None = None) -> Child:
    """`python -m replication run` on a properties file, its output in `log`."""
    return Child([sys.executable, "-m", "replication", "run", "--config", str(config), *(extra or [])], log, cwd=REPO)


def _wait_caught_up(child: Child, dst: str, remotes: list[str], records: int, timeout: float) -> None:
    """Until the target holds every record; a runner that exits meanwhile fails the measurement."""
    wait_for(lambda: not child.running() or _target_total(dst, remotes) >= records, timeout, "catch-up", 1)
    if not child.running():
        raise BenchError(f"the runner exited:\n{child.log_tail()}")


def _idle_cpu_pct(child: Child, seconds: float = 10) -> float:
    """The runner's process tree's CPU over `seconds` with no traffic, in % of one core."""
    cpu_before, idle_started = tree_cpu_seconds(child.pid), time.monotonic()
    time.sleep(seconds)  # the measured idle window, not a wait for a condition
    return 100 * (tree_cpu_seconds(child.pid) - cpu_before) / (time.monotonic() - idle_started)


def measure_idle_flows(
    src: str, dst: str, flows: int, per_partition: int, out: Path, shared_by: int = 0
) -> IdleFlowFigures:
    """`flows` flows, each from its own source alias (all on the same broker) with one topic of 10 partitions and
    tasks.max 1, caught up; then 10 s with no traffic. `shared_by`: the runner's --processes (0: one per task)."""
    run = uuid.uuid4().hex[:6]
    aliases = [f"i{run}x{i}" for i in range(flows)]
    topics = [f"idle-{run}-{i}" for i in range(flows)]
    _create(src, topics)
    records = _produce(src, topics, per_partition)
    lines = [f"clusters = {', '.join(aliases)}, dst", f"dst.bootstrap.servers = {dst}", "tasks.max = 1"]
    for alias, topic in zip(aliases, topics, strict=True):
        lines += [
            f"{alias}.bootstrap.servers = {src}",
            f"{alias}->dst.enabled = true",
            f"{alias}->dst.topics = {topic}",
        ]
    lines += [
        f"refresh.topics.interval.seconds = {REFRESH_SECONDS}",
        "emit.checkpoints.enabled = false",
        "sync.group.offsets.enabled = false",
    ]
    config = out / f"idle-{flows}-{shared_by}.properties"
    config.write_text("\n".join(lines) + "\n")
    child = _runner(config, out / f"idle-{flows}-{shared_by}.log", ["--processes", str(shared_by)] if shared_by else [])
    remotes = [f"{alias}.{topic}" for alias, topic in zip(aliases, topics, strict=True)]
    try:
        _wait_caught_up(child, dst, remotes, records, 600)
        idle_cpu = _idle_cpu_pct(child)
        pss, processes = tree_pss_mb(child.pid), len(process_tree(child.pid))
    finally:
        child.stop()
        _drop(src, topics, wait=True)
        _drop(dst, remotes + [positions_topic(alias) for alias in aliases], wait=True)
    return IdleFlowFigures(flows, shared_by, processes, round(pss, 1), round(pss / flows, 1), round(idle_cpu, 1))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,3000,10000", help="partitions per flow, comma-separated")
    parser.add_argument("--tasks", type=int, default=4, help="tasks.max")
    parser.add_argument("--records-per-partition", type=int, default=10)
    parser.add_argument("--keep-clusters", action="store_true")
    parser.add_argument("--idle-flows", default="1,4,8", help="flow counts of the idle-flow memory run ('' for none)")
    parser.add_argument(
        "--idle-processes",
        default="0,1",
        help="the runner's --processes for the idle-flow run, comma-separated (0: one process per task)",
    )
    args = parser.parse_args(argv)
    out = REPO / "var" / "bench" / f"scale-{time.strftime('%Y%m%d-%H%M%S')}"
    out.mkdir(parents=True, exist_ok=True)
    figures: list[ScaleFigures] = []
    with bench_clusters(keep=args.keep_clusters) as clusters:
        # First, on brokers that hold no partitions of the sizes' runs.
        idle: list[IdleFlowFigures] = []
        for shared_by in (int(n) for n in args.idle_processes.split(",") if n):
            for n in (int(n) for n in args.idle_flows.split(",") if n):
                idle.append(
                    measure_idle_flows(clusters.source, clusters.target, n, args.records_per_partition, out, shared_by)
                )
                print(json.dumps(asdict(idle[-1])), flush=True)
        sizes = [int(s) for s in args.sizes.split(",") if s]
        for size in sizes:
            cleanup: list[tuple[str, list[str]]] = []
            try:
                result = measure(
                    clusters.source, clusters.target, size, args.tasks, args.records_per_partition, out, cleanup
                )
                figures.append(result)
                print(json.dumps(asdict(result)), flush=True)
            finally:
                for bootstrap, topics in cleanup:
                    _drop(bootstrap, topics, wait=size != sizes[-1])
    header = (
        f"{'partitions':>10} {'topics':>6} {'records':>8} {'create s':>8} {'catch-up s':>10} {'pickup s':>8} "
        f"{'after created s':>15} "
        f"{'goal s':>6} {'idle CPU %':>10} {'idle at 600 s %':>15} {'peak RSS MB':>11} {'MB/1k p':>7} {'ERRORs':>6}"
    )
    print(f"\nstandalone runner, tasks.max {args.tasks}, refresh {REFRESH_SECONDS} s\n{header}")
    for f in figures:
        print(
            f"{f.partitions:>10} {f.topics:>6} {f.records:>8} {f.topics_created_s:>8} {f.catch_up_s:>10} "
            f"{f.pickup_s:>8} {f.pickup_after_created_s:>15} {f.pickup_goal_s:>6} {f.idle_cpu_pct:>10} "
            f"{f.idle_cpu_default_refresh_pct:>15} "
            f"{f.peak_rss_mb:>11} "
            f"{f.rss_mb_per_1k_partitions:>7} {f.error_lines:>6}"
        )
    if idle:
        print(
            f"\nidle flows (one topic of 10 partitions each, tasks.max 1)\n{'flows':>5} {'--processes':>11} "
            f"{'processes':>9} {'PSS MB':>7} {'MB per flow':>11} {'idle CPU %':>10}"
        )
        for i in idle:
            shared = str(i.shared_by) if i.shared_by else "per task"
            print(
                f"{i.flows:>5} {shared:>11} {i.processes:>9} {i.pss_mb:>7} {i.pss_mb_per_flow:>11} {i.idle_cpu_pct:>10}"
            )
    results = REPO / "bench" / "results"
    results.mkdir(exist_ok=True)
    (results / "scale-latest.json").write_text(
        json.dumps({"sizes": [asdict(f) for f in figures], "idle_flows": [asdict(i) for i in idle]}, indent=2) + "\n"
    )


if __name__ == "__main__":
    main()
