"""The bench's bare loops on real brokers: bench.bareloop and both modes of bench.eosloop copy every record once,
in each partition's order.

The two-producer mode commits one transaction while the next is produced; its order argument (flush before the
commit, commit after the one before) is what this checks: records arrive in 40 close bursts while it runs, so the copy
spans many transactions on both producers. It catches a reorder, not every time: without the flush before the
commit, it failed in 1 of 2 runs.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest
from confluent_kafka import Producer

from tests.support.kafka import consume_all, create_topic, unique_topic

pytestmark = pytest.mark.kafka

PARTITIONS = 4
BURSTS = 40
PER_BURST = 1000


@pytest.mark.parametrize(
    "loop",
    [["bench.bareloop"], ["bench.eosloop", "--producers", "1"], ["bench.eosloop", "--producers", "2"]],
    ids=["bareloop", "eosloop-1", "eosloop-2"],
)
def test_the_bare_loops_copy_every_record_once_in_order(
    kafka_clusters: dict[str, str], tmp_path: Path, loop: list[str]
) -> None:
    source, target = kafka_clusters["us-west"], kafka_clusters["us-east"]
    topic, remote = unique_topic("eosloop"), unique_topic("eosloop-remote")
    create_topic(source, topic, PARTITIONS)
    create_topic(target, remote, PARTITIONS)
    argv = [sys.executable, "-m", loop[0], "--source", source, "--target", target, "--topic", topic]
    argv += ["--remote", remote, "--partitions", str(PARTITIONS), *loop[1:]]
    with (tmp_path / "eosloop.log").open("wb") as log:
        loop = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        try:
            producer = Producer({"bootstrap.servers": source, "linger.ms": 2})
            for burst in range(BURSTS):
                for n in range(PER_BURST):
                    producer.produce(topic, f"{burst}-{n}".encode(), partition=n % PARTITIONS)
                producer.flush(30)
                time.sleep(0.01)  # the loop commits between bursts and within them
            total = BURSTS * PER_BURST
            records = consume_all(target, remote, PARTITIONS, total, timeout=60, isolation="read_committed")
        finally:
            loop.send_signal(signal.SIGTERM)
            code = loop.wait(30)
    assert code == 0, (tmp_path / "eosloop.log").read_text()
    got: dict[int, list[bytes]] = defaultdict(list)
    for msg in records:
        got[msg.partition() or 0].append(msg.value() or b"")
    for p in range(PARTITIONS):
        want = [f"{b}-{n}".encode() for b in range(BURSTS) for n in range(PER_BURST) if n % PARTITIONS == p]
        assert got[p] == want, f"partition {p}: {len(got[p])} records, first difference at " + str(
            next((i for i, (a, b) in enumerate(zip(got[p], want, strict=False)) if a != b), min(len(got[p]), len(want)))
        )
