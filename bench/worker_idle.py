"""The control plane's worker with one idle flow of many partitions: its CPU, beat's, and where it goes.

    python -m bench.worker_idle [--partitions-list 10000] [--runs 2] [--window 60] [--py-spy 40] [--repo PATH]

For each size: topics `wi<N>-NNNN` of 10 partitions on the bench source cluster, created and preloaded with
--records-per-partition records when missing (and kept, so later runs reuse them); a fresh state directory with the
demo's embedded defaults (SQLite, the spool transport, the threads pool with 12 slots and concurrency 16, the
controller's 2 s tick); one flow `wsrc<N>` -> `wdst` of every such topic at the flow defaults but tasks.max
(--tasks) and its consumer overrides (--consumer-overrides); one worker and beat of the tree --repo (default this
checkout), so another commit's tree is measured with the same bench. Once every task is RUNNING and the target holds
every source record, it waits --settle seconds, then reads over --window seconds the CPU of the worker's process
tree (split by thread name: librdkafka's broker threads, rdk:main, the rest; and the eight busiest broker threads
one by one, each a client's connection to a broker, the tasks' consumers the four busiest) and of beat, as % of one
core. With --py-spy S it then samples the worker's Python for S seconds (py-spy 0.4.3, not a project dependency:
`.venv/bin/pip install py-spy==0.4.3`) and prints the share of active samples per job. Runs after the first at a
size restart on the stored positions (the positions topic and remote topics stay). Prints figures; asserts nothing.
BENCH_CLUSTERS names running clusters. While /tmp/mirrorplane-quiet exists (another bench on this machine asks for
quiet) no worker runs: a measurement waits for it to go, and one it interrupts is started again. py-spy samples
without --native: time in librdkafka's calls (consume, flush, list_topics) counts as the calling Python frame's own,
and the thread split's `other` is every Python thread (their OS names are the process's).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import shutil
import sqlite3
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from bench.clusters import bench_clusters
from bench.kafkaops import BenchError, admin, wait_for
from bench.procs import Child, process_tree, thread_cpu_seconds, tree_cpu_seconds
from bench.scale import PARTITIONS_PER_TOPIC, _create, _produce, _target_total
from bench.worker_memory import demo_env

REPO = Path(__file__).resolve().parent.parent
SLOTS = 12  # the demo's (controlplane/demo/management/commands/demo.py), with concurrency SLOTS + 4

# Where a py-spy sample of the worker goes: the first pattern found in its stack (outermost frame first) names it.
JOBS = (
    ("controller tick", "services/controller.py"),
    ("provisioning", "services/provisioning.py"),
    ("lease renewal and task report", "runner.py:_renew_or_stop"),
    ("lease kept in a start/refresh", "leases.py:_keep"),
    ("task start/refresh", "runner.py:_kept"),
    ("side emitters (heartbeats, checkpoints)", "periodic.py"),
    ("task loop (run_once)", "runner.py:_replicate"),
    ("flow and partition-lag sampling", "monitoring/tasks.py:sample_flows"),
    ("cluster observation", "monitoring/tasks.py:observe"),
    ("alerts", "alerts/tasks.py"),
    ("heartbeat facts, reports", "reports/tasks.py"),
    ("worker heartbeat", "capacity.py:heartbeat_loop"),
    ("celery, kombu (consuming, scheduling)", "celery/"),
)


@dataclass
class IdleFigures:
    partitions: int
    tasks: int
    window_s: float
    worker_cpu_pct: float
    beat_cpu_pct: float
    threads_pct: dict[str, float]  # the worker tree's CPU by thread name group, % of one core
    busiest_broker_threads_pct: list[float]  # the eight busiest librdkafka broker threads, each % of one core
    loadavg: str
    jobs_pct: dict[str, float] = field(default_factory=dict)  # share of active py-spy samples
    py_spy_samples: int = 0


SEED = """
from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
source = Cluster.objects.create(alias={alias!r}, bootstrap_servers={src!r})
target = Cluster.objects.create(alias="wdst", bootstrap_servers={dst!r})
Flow.objects.create(
    source=source, target=target, topics=[{pattern!r}], tasks_max={tasks}, consumer_overrides={overrides!r}
)
"""


def _topics(src: str, size: int, per_partition: int) -> list[str]:
    """The size's source topics, created and preloaded when missing (CPU heavy at 10k: minutes)."""
    topics = [f"wi{size}-{i:04d}" for i in range(size // PARTITIONS_PER_TOPIC)]
    listed = admin(src).list_topics(timeout=60).topics
    missing = [t for t in topics if t not in listed]
    if missing:
        _quiet_machine()
        _create(src, missing)
        _produce(src, missing, per_partition)
    return topics


QUIET = Path("/tmp/mirrorplane-quiet")  # another bench on this machine asks for quiet while this file exists


class QuietRequested(BenchError):
    """The quiet file appeared during a measurement: its worker is stopped and the measurement starts again."""


def _quiet_machine() -> None:
    while QUIET.exists():
        print(f"waiting: {QUIET} exists", file=sys.stderr, flush=True)
        time.sleep(30)


def _idle(seconds: float) -> None:
    """Sleep, unless the quiet file appears meanwhile (QuietRequested): an idle worker still takes 10 % of a core."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if QUIET.exists():
            raise QuietRequested(f"{QUIET} appeared")
        time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))


def _running(db: Path, tasks: int) -> bool:
    with contextlib.suppress(sqlite3.Error), contextlib.closing(sqlite3.connect(db, timeout=5)) as conn:
        (n,) = conn.execute("SELECT count(*) FROM orchestration_taskassignment WHERE state = 'RUNNING'").fetchone()
        return int(n) >= tasks
    return False


def _thread_cpu(root: int) -> dict[int, tuple[str, float]]:
    """CPU seconds so far of every live thread of the tree, by thread id: (name, seconds)."""
    return {tid: (name, seconds) for pid in process_tree(root) for tid, name, seconds in thread_cpu_seconds(pid)}


def _thread_split(
    before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]], seconds: float
) -> tuple[dict[str, float], list[float]]:
    """The window's CPU, % of one core, by thread name group; and each librdkafka broker thread's, busiest first.
    Each broker thread is one client's connection to one broker: at 2,500 partitions per task, the four busiest
    are the tasks' consumers (their fetch rounds)."""
    groups: collections.Counter[str] = collections.Counter()
    brokers = []
    for tid, (name, spent) in after.items():
        pct = 100 * (spent - before.get(tid, (name, 0.0))[1]) / seconds
        group = "rdk:broker*" if name.startswith("rdk:broker") else name if name.startswith("rdk:") else "other"
        groups[group] += pct
        if group == "rdk:broker*":
            brokers.append(round(pct, 2))
    return {name: round(pct, 1) for name, pct in sorted(groups.items())}, sorted(brokers, reverse=True)[:8]


def _py_spy(pid: int, seconds: int, out: Path, gil: bool = False) -> tuple[int, dict[str, float]]:
    """Active samples of the worker's Python over `seconds` (with `gil`, only the thread holding the GIL: a thread
    woken and waiting for it counts as active otherwise), and their share per job of JOBS."""
    py_spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    if not Path(py_spy).is_file():
        raise BenchError("py-spy is not installed: .venv/bin/pip install py-spy==0.4.3")
    argv = [py_spy, "record", "--pid", str(pid), "--rate", "50", "--duration", str(seconds), "--format", "raw"]
    if gil:
        argv.append("--gil")
    subprocess.run([*argv, "--nonblocking", "--output", str(out)], check=True, capture_output=True)
    return jobs_split(out)


def jobs_split(raw: Path) -> tuple[int, dict[str, float]]:
    """py-spy's raw output (one 'outermost;...;innermost count' line per stack): samples, and % per job of JOBS."""
    shares: collections.Counter[str] = collections.Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        frames = [_where(frame) for frame in stack.split(";")]
        job = next((name for name, pattern in JOBS if any(pattern in f for f in frames)), "other")
        shares[job] += int(count)
        total += int(count)
    return total, {job: round(100 * n / total, 1) for job, n in shares.most_common()} if total else {}


def _where(frame: str) -> str:
    """'tick (controlplane/orchestration/services/controller.py:60)' -> '.../controller.py:tick'."""
    name, _, where = frame.partition(" (")
    return f"{where.rsplit(':', 1)[0]}:{name}"


def measure(args: argparse.Namespace, src: str, dst: str, size: int, out: Path) -> IdleFigures:
    """One measurement; started again from a fresh state when the quiet file appears before it ends."""
    while True:
        _quiet_machine()
        try:
            return _measure_once(args, src, dst, size, out)
        except QuietRequested as exc:
            print(f"measurement abandoned: {exc}", file=sys.stderr, flush=True)


def _measure_once(args: argparse.Namespace, src: str, dst: str, size: int, out: Path) -> IdleFigures:
    repo = Path(args.repo).resolve()
    topics = _topics(src, size, args.records_per_partition)
    state = out / f"{size}-{time.strftime('%H%M%S')}"
    state.mkdir(parents=True)
    env = demo_env(state, SLOTS)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=repo, env=env, check=True)
    alias = f"wsrc{size}"
    overrides = json.loads(args.consumer_overrides)
    seed = SEED.format(alias=alias, src=src, dst=dst, pattern=f"wi{size}-.*", tasks=args.tasks, overrides=overrides)
    subprocess.run([sys.executable, "manage.py", "shell", "-c", seed], cwd=repo, env=env, check=True)
    celery = [sys.executable, "-m", "celery", "-A", "controlplane"]
    pool = ["--pool", "threads", "--concurrency", str(SLOTS + 4)]
    worker = Child([*celery, "worker", "-l", "info", *pool], state / "worker.log", cwd=repo, env=env)
    beat = Child([*celery, "beat", "-l", "info", "--schedule", str(state / "schedule")], state / "beat.log", repo, env)
    try:
        records = _target_total(src, topics)
        remotes = [f"{alias}.{t}" for t in topics]
        wait_for(
            lambda: _idle(0) or (_running(state / "db.sqlite3", args.tasks) and _target_total(dst, remotes) >= records),
            1800,
            "every task RUNNING and every record at the target",
            5,
        )
        _idle(args.settle)  # the tasks' start and first reports are not idleness
        load = Path("/proc/loadavg").read_text().strip()
        threads_before = _thread_cpu(worker.pid)
        cpu_before, beat_before, started = tree_cpu_seconds(worker.pid), tree_cpu_seconds(beat.pid), time.monotonic()
        _idle(args.window)  # the measured window
        seconds = time.monotonic() - started
        threads, busiest = _thread_split(threads_before, _thread_cpu(worker.pid), seconds)
        figures = IdleFigures(
            partitions=size,
            tasks=args.tasks,
            window_s=round(seconds, 1),
            worker_cpu_pct=round(100 * (tree_cpu_seconds(worker.pid) - cpu_before) / seconds, 1),
            beat_cpu_pct=round(100 * (tree_cpu_seconds(beat.pid) - beat_before) / seconds, 1),
            threads_pct=threads,
            busiest_broker_threads_pct=busiest,
            loadavg=f"{load} (before) / {Path('/proc/loadavg').read_text().strip()} (after)",
        )
        if args.py_spy:
            _idle(0)
            figures.py_spy_samples, figures.jobs_pct = _py_spy(worker.pid, args.py_spy, state / "py-spy.txt", args.gil)
        return figures
    finally:
        worker.stop(120)
        beat.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--partitions", type=int, default=10_000, help="partitions of the flow")
    parser.add_argument("--partitions-list", default="", help="several sizes, comma-separated (overrides the above)")
    parser.add_argument("--tasks", type=int, default=4, help="the flow's tasks.max")
    parser.add_argument("--runs", type=int, default=1, help="measurements per size")
    parser.add_argument("--records-per-partition", type=int, default=10)
    parser.add_argument("--settle", type=float, default=30.0, help="seconds after catch-up before the window")
    parser.add_argument("--window", type=float, default=60.0, help="seconds of the CPU window")
    parser.add_argument("--py-spy", type=int, default=0, metavar="SECONDS", help="then sample with py-spy")
    parser.add_argument("--gil", action="store_true", help="py-spy samples only the thread holding the GIL")
    parser.add_argument(
        "--consumer-overrides",
        default="{}",
        help="the flow's consumer overrides, JSON, e.g. '{\"fetch.wait.max.ms\": 5000}'",
    )
    parser.add_argument("--repo", default=str(REPO), help="the tree whose worker and beat run (default: this one)")
    parser.add_argument("--keep-clusters", action="store_true")
    parser.add_argument("--split", metavar="PY_SPY_TXT", help="only print the job split of a saved py-spy file")
    args = parser.parse_args(argv)
    if args.split:
        print(jobs_split(Path(args.split)))
        return
    sizes = [int(s) for s in args.partitions_list.split(",") if s] or [args.partitions]
    out = REPO / "var" / "bench" / f"worker-idle-{time.strftime('%Y%m%d-%H%M%S')}"
    figures: list[IdleFigures] = []
    with bench_clusters(keep=args.keep_clusters) as clusters:
        for size in sizes:
            for _ in range(args.runs):
                figures.append(measure(args, clusters.source, clusters.target, size, out))
                print(json.dumps(asdict(figures[-1])), flush=True)
    print(f"\nworker tree of {args.repo}, idle, % of one core over {args.window:.0f} s (logs: {out})")
    print(f"{'partitions':>10} {'worker %':>8} {'beat %':>6}  threads %")
    for f in figures:
        print(f"{f.partitions:>10} {f.worker_cpu_pct:>8} {f.beat_cpu_pct:>6}  {f.threads_pct}  load {f.loadavg}")
        print(f"{'':>10} busiest librdkafka broker threads, % each: {f.busiest_broker_threads_pct}")
        if f.jobs_pct:
            print(f"{'':>10} py-spy, {f.py_spy_samples} active samples: {f.jobs_pct}")


if __name__ == "__main__":
    main()
