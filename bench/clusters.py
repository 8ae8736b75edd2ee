"""The two clusters a benchmark runs on: our own local pair (Kafka 4 by default, MIRRORPLANE_KAFKA_VERSION chooses),
or running ones from BENCH_CLUSTERS."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from localkafka import LocalKafka

# BENCH_STATE_DIR, BENCH_BROKER_PORT_BASE and BENCH_CONTROL_PORT_BASE move the bench's own pair, so that two
# benches (or a bench beside other clusters) on one machine do not share brokers or ports.
STATE_DIR = Path(os.environ.get("BENCH_STATE_DIR") or "var/bench-kafka")
BROKER_PORT_BASE = int(os.environ.get("BENCH_BROKER_PORT_BASE") or 21092)  # away from dev (19092+) and test (29092+)
ZK_PORT_BASE = int(os.environ.get("BENCH_CONTROL_PORT_BASE") or 14181)
# Kafka's own default (kafka-server-start.sh). At 512m, localkafka's default, the source broker of a 10,000-partition
# bench-scale run on 2.3.0 spent nearly two cores in GC after a few runner starts and lost its ZooKeeper session.
BROKER_HEAP = "1g"


@dataclass(frozen=True)
class BenchClusters:
    """Source and target bootstrap servers, and the broker PIDs when we started the brokers ourselves."""

    source: str
    target: str
    kafka_version: str
    broker_pids: tuple[int, ...] = field(default=())


def parse_bench_clusters(value: str) -> tuple[str, str]:
    """'src=host:port,dst=host:port' -> (source, target) bootstrap servers."""
    pairs = dict(item.split("=", 1) for item in value.split(",") if "=" in item)
    if set(pairs) != {"src", "dst"}:
        raise SystemExit(f"BENCH_CLUSTERS must look like 'src=127.0.0.1:21092,dst=127.0.0.1:21093', got {value!r}")
    return pairs["src"].strip(), pairs["dst"].strip()


@contextmanager
def bench_clusters(keep: bool = False) -> Iterator[BenchClusters]:
    """Reuse the clusters BENCH_CLUSTERS names, or start our own pair and stop it afterwards (unless keep)."""
    given = os.environ.get("BENCH_CLUSTERS")
    if given:
        source, target = parse_bench_clusters(given)
        yield BenchClusters(source, target, "unknown (BENCH_CLUSTERS)")
        return
    kafka = LocalKafka(STATE_DIR, BROKER_PORT_BASE, ZK_PORT_BASE, broker_heap=BROKER_HEAP)
    try:
        servers = kafka.up(["src", "dst"])
        pids = (kafka.broker_pid("src"), kafka.broker_pid("dst"))
        yield BenchClusters(servers["src"], servers["dst"], kafka.version, pids)
    finally:
        if not keep:
            kafka.down()  # data stays in var/bench-kafka, so the next run reuses the preloaded topics
