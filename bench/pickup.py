"""New-topic pickup: how long a running replicator takes to copy the first record of a topic created after it started.

Method. The replicator runs a flow whose `topics` is a pattern, `pk<run>-.*`, over one existing topic that holds
one record; it counts as running once that record is at the target (JVM and interpreter start-up left out). Then
a second topic of the pattern is created at the source and one record is written to it. The pickup time runs from
the broker's acknowledgement of that record to the moment the record is readable at the target: the time to notice
the topic (`refresh.topics.interval.seconds`, 600 s by default in both MM2 and Mirrorplane), create the remote topic
and copy the record. One sample per replicator and refresh setting: at a refresh of R seconds a sample lies
anywhere in [0, R] plus the copy, so the figure says which side of R each replicator lands, not a distribution.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from confluent_kafka import Producer

from bench.kafkaops import BenchError, Watermarks, create_topic, delete_topics
from bench.replicators import MirrorMaker2, Mirrorplane, Replicator, RunContext

POLL_S = 0.1
# Beyond the refresh interval: MM2 restarts its tasks to add a topic, and a loaded machine is slow at that.
GRACE_S = 180.0


@dataclass
class PickupResult:
    replicator: str
    refresh_s: float | None  # None: the replicator's default
    pickup_s: float | None  # None: not picked up before the deadline
    deadline_s: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def pickup_replicator(name: str, refresh_s: float | None, pattern: str) -> Replicator:
    """`name` (mm2, mp-alo) copying every topic of `pattern`, at refresh_s or its default refresh."""
    properties = {"topics": pattern}
    if refresh_s is not None:
        properties["refresh.topics.interval.seconds"] = f"{refresh_s:g}"
    if name == "mm2":
        return MirrorMaker2(properties=properties)
    if name == "mp-alo":
        return Mirrorplane(properties=properties)
    raise ValueError(f"pickup: {name} is not one of mm2, mp-alo")


def run_pickup(name: str, ctx: RunContext, refresh_s: float | None, default_s: float = 600.0) -> PickupResult:
    prefix = f"pk{ctx.run_id}"
    first, second = f"{prefix}-a", f"{prefix}-b"
    create_topic(ctx.clusters.source, first, 1, {})
    _produce_one(ctx.clusters.source, first)
    replicator = pickup_replicator(name, refresh_s, f"{prefix}-.*")
    launch = replicator.launch(ctx, first, 1, {})
    deadline_s = (refresh_s if refresh_s is not None else default_s) + GRACE_S
    remote_second = launch.target_topic[: -len(first)] + second
    marks = Watermarks(ctx.clusters.target, remote_second, 1)
    pickup: float | None = None
    try:
        _wait(launch.child.running, lambda: launch.replicated() >= 1, GRACE_S, f"{name}: {first} copied")
        create_topic(ctx.clusters.source, second, 1, {})
        acked = _produce_one(ctx.clusters.source, second)
        deadline = acked + deadline_s
        while time.monotonic() < deadline:
            if not launch.child.running():
                raise BenchError(f"{name} exited during the pickup run:\n{launch.child.log_tail()}")
            if marks.end_sum() >= 1:
                pickup = time.monotonic() - acked
                break
            time.sleep(POLL_S)
    finally:
        marks.close()
        launch.child.stop()
        launch.close()
        delete_topics(ctx.clusters.target, [*launch.target_topics, remote_second], wait=False)
        delete_topics(ctx.clusters.source, [first, second], wait=False)
    return PickupResult(replicator.name, refresh_s, None if pickup is None else round(pickup, 2), deadline_s)


def _produce_one(bootstrap: str, topic: str) -> float:
    """Write one record; the monotonic time of its acknowledgement."""
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    acked: list[float] = []
    producer.produce(topic, b"pickup", key=b"pickup", on_delivery=lambda err, _msg: acked.append(time.monotonic()))
    if producer.flush(30) or not acked:
        raise BenchError(f"{topic}: the pickup record was not acknowledged in 30 s")
    return acked[0]


def _wait(alive: Callable[[], bool], condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if not alive():
            raise BenchError(f"the replicator exited before: {what}")
        if time.monotonic() > deadline:
            raise BenchError(f"not within {timeout:.0f} s: {what}")
        time.sleep(POLL_S)
