"""What the brokers move on this machine: Kafka's own ProducerPerformance and ConsumerPerformance, the ceiling a
replicator's copy is measured against.

Method. kafka-consumer-perf-test reads the preloaded source data set (the records a replicator copies), and
kafka-producer-perf-test writes as many records of the same size into a fresh topic of the target, acks=all, with
the producer batching MM2 is tuned with (bench/mm2props.py). Each is a JVM of its own, run alone. A replicator does
both at once on the same two cores, so neither rate alone is reachable: the ceiling of a copy is taken as
1 / (1/consume + 1/produce), the rate at which one process could read and then write each record if the two took
turns on the machine. `python -m bench.limits` runs it on the bench's clusters; `make bench` runs it first.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench.clusters import bench_clusters
from bench.kafkaops import BenchError, create_topic, delete_topics
from bench.mm2props import THROUGHPUT_PRODUCER
from bench.preload import Dataset
from localkafka.dist import DEFAULT_KAFKA_VERSION, runtime
from localkafka.manager import default_cache_dir

WAIT = ["--timeout", "60000"]  # the consumer's 10 s default ends a read on a busy machine before it is complete
PRODUCED = re.compile(r"(\d+) records sent, ([\d.]+) records/sec")


@dataclass
class LimitResult:
    """Records/s the perf tools moved for one data set, and the ceiling of a copy derived from them."""

    dataset: str
    records: int
    consume_records_per_s: float
    produce_records_per_s: float

    @property
    def copy_records_per_s(self) -> float:
        return copy_ceiling(self.consume_records_per_s, self.produce_records_per_s)

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "copy_records_per_s": round(self.copy_records_per_s)}


def copy_ceiling(consume: float, produce: float) -> float:
    """1 / (1/consume + 1/produce): read then write each record, the two taking turns on the machine."""
    return 1 / (1 / consume + 1 / produce) if consume > 0 and produce > 0 else 0.0


def parse_producer(output: str) -> float:
    """records/s from ProducerPerformance's last summary line ('N records sent, R records/sec (...)')."""
    found = PRODUCED.findall(output)
    if not found:
        raise BenchError(f"no ProducerPerformance summary in:\n{output[-2000:]}")
    return float(found[-1][1])


def parse_consumer(output: str, expected: int) -> float:
    """Records/s from ConsumerPerformance's CSV (a header line naming the columns, then one line of figures):
    fetch.nMsg.sec, the rate over the fetching time without the group join; nMsg.sec where that is missing."""
    lines = [line for line in output.splitlines() if line.count(",") >= 5]
    header = next((i for i, line in enumerate(lines) if "nMsg.sec" in line), None)
    if header is None or header + 1 >= len(lines):
        raise BenchError(f"no ConsumerPerformance figures in:\n{output[-2000:]}")
    names, values = (lines[i].split(",") for i in (header, header + 1))
    row = {name.strip(): value.strip() for name, value in zip(names, values, strict=True)}
    if int(row["data.consumed.in.nMsg"]) < expected:
        raise BenchError(f"ConsumerPerformance read {row['data.consumed.in.nMsg']} of {expected} records")
    fetch_rate = float(row.get("fetch.nMsg.sec", "0"))
    return fetch_rate if fetch_rate > 0 else float(row["nMsg.sec"])


def _tool(name: str, args: list[str], workdir: Path, timeout: float) -> str:
    kafka = runtime(DEFAULT_KAFKA_VERSION, default_cache_dir())
    command, env = kafka.tool(name, workdir / f"{name}-logs", heap="1g")
    done = subprocess.run([*command, *args], capture_output=True, text=True, env=env, timeout=timeout, check=False)
    if done.returncode != 0:
        raise BenchError(f"{name} exited with {done.returncode}:\n{(done.stdout + done.stderr)[-2000:]}")
    return done.stdout


def run_limit(source: str, target: str, dataset: Dataset, workdir: Path) -> LimitResult:
    timeout = max(300.0, dataset.count / 2000)
    consumed = _tool(
        "kafka-consumer-perf-test",
        ["--bootstrap-server", source, "--topic", dataset.topic, "--messages", str(dataset.count), *WAIT],
        workdir,
        timeout,
    )
    topic = f"limit-{uuid.uuid4().hex[:8]}"
    create_topic(target, topic, dataset.partitions)
    props = [f"bootstrap.servers={target}", "acks=all", *(f"{k}={v}" for k, v in THROUGHPUT_PRODUCER.items())]
    args = ["--topic", topic, "--num-records", str(dataset.count), "--record-size", str(dataset.size)]
    try:
        produced = _tool(
            "kafka-producer-perf-test", [*args, "--throughput", "-1", "--producer-props", *props], workdir, timeout
        )
    finally:
        delete_topics(target, [topic], wait=False)
    return LimitResult(dataset.label, dataset.count, parse_consumer(consumed, dataset.count), parse_producer(produced))


def closeness(steady_rates: dict[tuple[str, str], float], limits: Sequence[LimitResult]) -> list[dict[str, Any]]:
    """Each replicator's median steady records/s as a share of the copy ceiling of its data set."""
    ceiling = {limit.dataset: limit.copy_records_per_s for limit in limits}
    return [
        {"dataset": data, "replicator": rep, "share_of_ceiling": round(rate / ceiling[data], 3)}
        for (data, rep), rate in steady_rates.items()
        if ceiling.get(data)
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.limits", description=__doc__)
    parser.add_argument("--records", type=int, nargs=2, default=[2_000_000, 500_000], metavar=("SMALL", "LARGE"))
    parser.add_argument("--sizes", type=int, nargs=2, default=[100, 1024], metavar=("SMALL", "LARGE"))
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--keep-clusters", action="store_true")
    args = parser.parse_args(argv)
    with bench_clusters(keep=args.keep_clusters) as clusters:
        for count, size in zip(args.records, args.sizes, strict=True):
            result = run_limit(clusters.source, clusters.target, Dataset(count, size, args.partitions), Path("var"))
            print(result.as_dict())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
