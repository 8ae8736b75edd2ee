"""Group failover: records read again or skipped when a consumer group moves to the target by each replicator's
checkpoints.

Method. A consumer group has committed, at the source, a position inside every partition of the small-record data
set: partition p at (p + 1) / (partitions + 1) of its records, so no position falls on a round number. The
replicator then copies the data set, checkpoints on. Once the copy is complete and the group's checkpoints have
stood still for `STILL_S`, the group's position at the target is what the checkpoints give, read as Kafka's
`RemoteClusterUtils.translateOffsets` reads them (the latest checkpoint per partition, `MirrorClient`;
tests/integration/test_mm2_interop.py holds the Java and the Python reader to the same figures). The copy is one
for one (no restart, no transaction), so a target offset is the source offset of the same record, which the run
checks per partition; then, per partition:

- read again: committed position - translated position, when the translation is behind;
- skipped: translated position - committed position, when it is ahead.

Mirrorplane's failover wizard translates with the same checkpoints and the same rule, so `mp-alo`'s row is the
wizard's figure. Both replicators run with checkpoints every second and a group refresh of 5 s (defaults 60 s and
600 s in MM2; 5 s and 600 s in Mirrorplane), so the run waits for the copy, not for timers. MM2 keeps
`offset.lag.max` at its default (100) and its offset syncs as sparse as its default makes them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from confluent_kafka import Consumer, TopicPartition

from bench.kafkaops import BenchError, Watermarks, delete_topics
from bench.preload import KEEP_FOREVER, Dataset
from bench.replicators import MirrorMaker2, Mirrorplane, Replicator, RunContext
from replication.config import ClusterConfig
from replication.offsets.mirrorclient import MirrorClient

STILL_S = 5.0  # checkpoints unchanged this long: the replicator has translated what it will
CHECKPOINT_TIMEOUT_S = 180.0
POLL_S = 1.0
CHECKPOINTS = {"emit.checkpoints.interval.seconds": "1", "refresh.groups.interval.seconds": "5"}


@dataclass
class FailoverResult:
    replicator: str
    records: int
    partitions: int
    committed: list[int] = field(default_factory=list)  # the group's source position, per partition
    translated: list[int | None] = field(default_factory=list)  # its position at the target from the checkpoints
    read_again: int = 0
    skipped: int = 0
    exact_partitions: int = 0
    untranslated_partitions: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def failover_replicator(name: str) -> Replicator:
    if name == "mm2":
        return MirrorMaker2(properties=CHECKPOINTS)
    if name == "mp-alo":
        return Mirrorplane(properties=CHECKPOINTS)
    raise ValueError(f"failover: {name} is not one of mm2, mp-alo")


def committed_positions(dataset: Dataset, ends: list[int]) -> list[int]:
    """Partition p's committed position: (p + 1) / (partitions + 1) of its records."""
    return [end * (p + 1) // (dataset.partitions + 1) for p, end in enumerate(ends)]


def run_failover(name: str, ctx: RunContext, dataset: Dataset) -> FailoverResult:
    started = time.monotonic()
    source_marks = Watermarks(ctx.clusters.source, dataset.topic, dataset.partitions)
    try:
        ends = [high for _, high in source_marks.existing_offsets()]
    finally:
        source_marks.close()
    committed = committed_positions(dataset, ends)
    group = f"bench-failover-{ctx.run_id}"
    _commit(ctx.clusters.source, group, dataset.topic, committed)
    replicator = failover_replicator(name)
    launch = replicator.launch(ctx, dataset.topic, dataset.partitions, KEEP_FOREVER)
    alias = launch.target_topic[: -len(dataset.topic) - 1]
    client = MirrorClient(ClusterConfig("target", {"bootstrap.servers": ctx.clusters.target}))
    try:
        _until(launch.child.running, lambda: launch.replicated() >= dataset.count, max(180.0, dataset.count / 5000))
        targets = [high for _, high in launch.target.existing_offsets()]
        if targets != ends:
            raise BenchError(f"{name}: target end offsets {targets} are not the source's {ends}: not one for one")
        translated = _still_checkpoints(client, group, alias, launch.target_topic, dataset.partitions)
    finally:
        launch.child.stop()
        launch.close()
        delete_topics(ctx.clusters.target, launch.target_topics, wait=False)
    result = FailoverResult(replicator.name, dataset.count, dataset.partitions, committed, translated)
    for at, to in zip(committed, translated, strict=True):
        if to is None:
            result.untranslated_partitions += 1
        elif to < at:
            result.read_again += at - to
        elif to > at:
            result.skipped += to - at
        else:
            result.exact_partitions += 1
    result.seconds = round(time.monotonic() - started, 1)
    return result


def _commit(bootstrap: str, group: str, topic: str, offsets: list[int]) -> None:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        consumer.commit(offsets=[TopicPartition(topic, p, o) for p, o in enumerate(offsets)], asynchronous=False)
    finally:
        consumer.close()


def _still_checkpoints(client: MirrorClient, group: str, alias: str, remote: str, partitions: int) -> list[int | None]:
    """The group's translated positions once every partition has one and none changed for STILL_S (or, at the
    deadline, whatever there is: a partition with no checkpoint is None)."""
    deadline = time.monotonic() + CHECKPOINT_TIMEOUT_S
    last: list[int | None] = []
    still_since = time.monotonic()
    while time.monotonic() < deadline:
        offsets = client.remote_consumer_offsets(group, alias)
        now = [offsets.get((remote, p)) for p in range(partitions)]
        if now != last:
            last, still_since = now, time.monotonic()
        elif None not in now and time.monotonic() - still_since >= STILL_S:
            return now
        time.sleep(POLL_S)
    return last


def _until(alive: Callable[[], bool], condition: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if not alive():
            raise BenchError("the replicator exited before the copy completed")
        if time.monotonic() > deadline:
            raise BenchError(f"the copy did not complete in {timeout:.0f} s")
        time.sleep(0.1)
