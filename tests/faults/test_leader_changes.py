"""Leader changes on clusters of three brokers: the leader of the replicated partitions SIGKILLed on the source or on
the target, a rolling restart of every broker, a partition reassignment of the source topic. Records are produced
all through each fault; each scenario asserts, record by record on the target, 0 lost and 0 duplicated, in both modes
(at least once, whose restart resumes exactly after what the target holds; exactly once, in transactions), and that
the task's reported lag stays honest while the fault lasts."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Message, Producer, TopicPartition
from confluent_kafka.admin import NewTopic

from localkafka import LocalKafka
from localkafka.choices import ClusterChoice
from localkafka.dist import DEFAULT_KAFKA_VERSION, LEGACY_KAFKA_VERSION, default_version
from tests.conftest import fresh_local_kafka
from tests.faults.test_faults import Supervisor, _flow
from tests.support.kafka import admin, consume_to_end, unique_topic, wait_until
from tests.support.replication import record_value

pytestmark = [pytest.mark.kafka, pytest.mark.slow]
PARTITIONS = 2
BROKERS = 3
MODES: dict[str, dict[str, Any]] = {"at-least-once": {}, "exactly-once": {"exactly_once": True}}
# A task that reports a lag of 0 must have copied every record the source held this long before. Records produced a
# moment ago are always on their way while the feed runs: the task's lag is the source consumer's cached end offset
# (renewed by each fetch) minus its position, stored at each offset flush or transaction commit (200 ms and 100 ms
# here), and the target's count is read through a consumer that fetches every 50 ms, samples 250 ms apart. Two
# seconds covers those intervals several times over.
ZERO_LAG_SLACK_SECONDS = 2.0
SAMPLE_SECONDS = 0.25


@pytest.fixture(scope="module")
def leader_kafka() -> Iterator[LocalKafka]:
    version = default_version()
    version = DEFAULT_KAFKA_VERSION if version == LEGACY_KAFKA_VERSION else version  # 2.3.0 runs one broker
    kafka = fresh_local_kafka("leader-kafka", int(os.environ.get("MIRRORPLANE_LEADER_PORT_BASE", "24092")))
    try:
        kafka.up({alias: ClusterChoice(version, brokers=BROKERS) for alias in ("src", "dst")}, timeout=300)
        yield kafka
    finally:
        kafka.down(purge=True)


@pytest.fixture
def leader_clusters(leader_kafka: LocalKafka) -> dict[str, str]:
    """src and dst with every broker running and every partition's replicas in sync."""
    for alias in ("src", "dst"):
        leader_kafka.restart_broker(alias, timeout=180)
    clusters = leader_kafka.bootstraps()
    for bootstrap in clusters.values():
        wait_until(lambda b=bootstrap: _in_sync(b), timeout=120, interval=0.5, what=f"{bootstrap} in sync")
    return clusters


# -- the cluster's view ----------------------------------------------------------------------------------------
def _in_sync(bootstrap: str) -> bool:
    """Every broker registered, and every partition of every topic with all its replicas in sync."""
    client = admin(bootstrap)
    try:
        metadata = client.list_topics(timeout=10)
    except Exception:  # a broker restarting: asked again to the caller's deadline
        return False
    partitions = [p for t in metadata.topics.values() for p in t.partitions.values()]
    return len(metadata.brokers) == BROKERS and all(sorted(p.isrs) == sorted(p.replicas) for p in partitions)


def _partitions(bootstrap: str, topic: str) -> dict[int, Any]:
    return dict(admin(bootstrap).list_topics(topic, timeout=10).topics[topic].partitions)


def _leader(bootstrap: str, topic: str, partition: int = 0) -> int:
    leader: int = _partitions(bootstrap, topic)[partition].leader
    return leader


class Feeder(threading.Thread):
    """Produces record_value(p, seq) round-robin over the partitions, paced, until stopped: an idempotent producer,
    so that its retries through a leader change write each record once."""

    def __init__(self, bootstrap: str, topic: str, chunk: int = 10, pause: float = 0.1) -> None:
        super().__init__(daemon=True)
        self.topic, self.chunk, self.pause = topic, chunk, pause
        self.producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5})
        self.count = 0
        self.errors: list[str] = []
        self._stopping = threading.Event()

    def run(self) -> None:
        while not self._stopping.is_set():
            for i in range(self.count, self.count + self.chunk):
                p, seq = i % PARTITIONS, i // PARTITIONS
                self.producer.produce(self.topic, record_value(p, seq), f"key-{i}".encode(), p, on_delivery=self._ack)
            self.count += self.chunk
            self.producer.poll(0)
            time.sleep(self.pause)  # pacing of the feed, not a wait for a condition

    def _ack(self, error: KafkaError | None, _message: Message) -> None:
        if error is not None:
            self.errors.append(error.str())

    def finish(self) -> int:
        self._stopping.set()
        self.join(30)
        assert self.producer.flush(120) == 0 and not self.errors, self.errors[:3]
        return self.count


class TargetCount:
    """Records of the remote topic read so far, by partition: read_committed in exactly-once mode."""

    def __init__(self, bootstrap: str, topic: str, isolation: str) -> None:
        self.consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": f"mp-test-{uuid.uuid4().hex[:8]}",
                "enable.auto.commit": False,
                "isolation.level": isolation,
                "fetch.wait.max.ms": 50,
            }
        )
        self.consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
        self.counts = [0] * PARTITIONS

    def read(self) -> list[int]:
        for _ in range(20):  # bounded: the task keeps writing
            messages = self.consumer.consume(2000, timeout=0.05)
            for m in messages:
                if m.error() is None:
                    self.counts[m.partition() or 0] += 1
            if not messages:
                break
        return list(self.counts)


@dataclass
class LagWatch:
    """Samples the task's reported lag and the brokers' (source end offset minus the records the target holds)."""

    source: str
    topic: str
    supervisor: Supervisor
    target: TargetCount
    watermarks: Consumer = field(init=False)
    samples: int = 0
    max_task_lag: int = 0
    max_broker_lag: int = 0
    longest_zero: float = 0.0
    negative: list[str] = field(default_factory=list)
    history: list[str] = field(default_factory=list)  # one line a sample: what a failure shows
    zero_window: tuple[int, int] = (0, 0)  # the samples of the longest lag 0 with records waiting
    ends_seen: list[tuple[float, list[int]]] = field(default_factory=list)
    stale_zero: int = 0  # samples of lag 0 while the target lacked records the source held the slack before
    _zero_since: float | None = None
    _zero_first = 0
    _next: float = 0.0

    def __post_init__(self) -> None:
        self.watermarks = Consumer({"bootstrap.servers": self.source, "group.id": "mp-test-probe"})

    def task_lag(self) -> int | None:
        flow = self.supervisor.metrics.snapshot()["flows"].get(self.supervisor.flow.name, {})
        lags = [flow.get("partitions", {}).get(f"{self.topic}-{p}", {}).get("replication-record-lag") for p in range(2)]
        return None if None in lags else sum(lag for lag in lags if lag is not None)

    def sample(self) -> None:
        now = time.monotonic()
        if now < self._next:
            return
        self._next = now + SAMPLE_SECONDS
        task = self.task_lag()
        held = self.target.read()  # before the source's end: a record copied in between cannot make it negative
        try:
            ends = [
                self.watermarks.get_watermark_offsets(TopicPartition(self.topic, p), timeout=2)[1] for p in range(2)
            ]
        except Exception:  # the source partition's leader is changing: no figure this time
            # A consumer that is not fetching keeps asking the leader it knew; a new one asks who leads now.
            self.watermarks.close()
            self.__post_init__()
            return
        brokers = [end - count for end, count in zip(ends, held, strict=True)]
        self.samples += 1
        if min(brokers) < 0 or (task is not None and task < 0):
            self.negative.append(f"task {task}, brokers {brokers} (ends {ends}, target {held})")
        self.max_broker_lag = max(self.max_broker_lag, sum(brokers))
        self.max_task_lag = max(self.max_task_lag, task or 0)
        self.history.append(f"{now:.2f} task lag {task} brokers {brokers} (ends {ends}, target {held})")
        self.ends_seen.append((now, ends))
        before = [e for t, e in self.ends_seen if t <= now - ZERO_LAG_SLACK_SECONDS]
        if task == 0 and before and any(count < end for count, end in zip(held, before[-1], strict=True)):
            self.stale_zero += 1
            if self._zero_since is None:
                self._zero_since, self._zero_first = now, len(self.history) - 1
            if now - self._zero_since > self.longest_zero:
                self.longest_zero = now - self._zero_since
                self.zero_window = (self._zero_first, len(self.history))
        else:
            self._zero_since = None

    def zero_samples(self) -> str:
        first, last = self.zero_window
        return "\n".join([*self.history[max(first - 2, 0) : first + 6], "...", *self.history[last - 3 : last + 2]])


# -- the scenario ------------------------------------------------------------------------------------------------
def _run(
    clusters: dict[str, str], mode: str, name: str, fault: Callable[[str], None], assignment: list[list[int]] | None
) -> None:
    """Replicate a topic produced to all along, run fault(topic) in a thread meanwhile, then check every record."""
    topic, started = unique_topic(name), time.monotonic()
    remote, exactly_once = f"src.{topic}", bool(MODES[mode])
    new = (
        NewTopic(topic, PARTITIONS, replica_assignment=assignment)
        if assignment
        else NewTopic(topic, PARTITIONS, BROKERS)
    )
    client = admin(clusters["src"])
    client.create_topics([new])[topic].result(timeout=30)
    wait_until(lambda: len(_partitions(clusters["src"], topic)) == PARTITIONS, what=f"metadata of {topic}")
    feeder = Feeder(clusters["src"], topic)
    feeder.start()
    supervisor = Supervisor(_flow(clusters, topic, **MODES[mode]))
    supervisor.task.batch_size = 200
    isolation = "read_committed" if exactly_once else "read_uncommitted"
    supervisor.until(lambda: _topic_exists(clusters["dst"], remote), what="the remote topic")
    watch = LagWatch(clusters["src"], topic, supervisor, TargetCount(clusters["dst"], remote, isolation))
    supervisor.until(lambda: sum(watch.target.read()) >= 200, what="replication under way")
    failure: list[BaseException] = []
    thread = threading.Thread(target=_catching(fault, topic, failure), daemon=True)
    thread.start()
    while thread.is_alive():
        supervisor.step()
        watch.sample()
    assert not failure, failure
    count = feeder.finish()

    def copied() -> bool:
        watch.sample()
        return sum(watch.target.read()) >= count

    supervisor.until(copied, timeout=180, what=f"all {count} records on the target")
    supervisor.task.close()
    _assert_each_once(clusters["src"], topic, count, "read_uncommitted")
    _assert_each_once(clusters["dst"], remote, count, isolation)
    print(
        f"\n{name} [{mode}]: {count} records in {time.monotonic() - started:.1f} s; lag samples {watch.samples}, "
        f"max task lag {watch.max_task_lag}, max broker lag {watch.max_broker_lag}, longest task lag 0 with records "
        f"{ZERO_LAG_SLACK_SECONDS} s old waiting {watch.longest_zero:.2f} s; task restarts {len(supervisor.errors)}"
    )
    assert not watch.negative, watch.negative[:3]
    assert watch.samples >= 10, "too few lag samples to tell"
    assert watch.stale_zero == 0, (
        f"lag 0 in {watch.stale_zero} samples ({watch.longest_zero:.1f} s at most) while records "
        f"{ZERO_LAG_SLACK_SECONDS} s old waited:\n"
        f"{watch.zero_samples()}"
    )


def _topic_exists(bootstrap: str, topic: str) -> bool:
    try:
        return len(_partitions(bootstrap, topic)) == PARTITIONS
    except Exception:
        return False


def _catching(fault: Callable[[str], None], topic: str, failure: list[BaseException]) -> Callable[[], None]:
    def run() -> None:
        try:
            time.sleep(2)  # some records flow before the fault: pacing, not a wait for a condition
            fault(topic)
        except BaseException as exc:  # re-raised in the test's thread
            failure.append(exc)

    return run


def _assert_each_once(bootstrap: str, topic: str, count: int, isolation: str) -> None:
    values = [m.value() for m in consume_to_end(bootstrap, topic, PARTITIONS, isolation=isolation)]
    expected = {record_value(p, seq) for p in range(PARTITIONS) for seq in range(count // PARTITIONS)}
    lost, duplicated = len(expected - set(values)), len(values) - len(set(values))
    assert (lost, duplicated, set(values) - expected) == (0, 0, set()), f"{topic}: {lost} lost, {duplicated} duplicated"


def _kill_leader_and_start_again(
    kafka: LocalKafka, alias: str, topic_of: Callable[[str], str]
) -> Callable[[str], None]:
    def fault(topic: str) -> None:
        bootstrap = kafka.bootstraps()[alias]
        leader = _leader(bootstrap, topic_of(topic))
        kafka.kill_broker(alias, leader)
        wait_until(
            lambda: _leader(bootstrap, topic_of(topic)) not in (leader, -1),
            timeout=60,
            interval=0.5,
            what="a new leader",
        )
        kafka.start_broker(alias, leader, timeout=180)
        wait_until(lambda: _in_sync(bootstrap), timeout=120, interval=0.5, what=f"{alias} in sync again")

    return fault


@pytest.mark.parametrize("mode", MODES)
def test_the_source_leader_sigkilled_mid_stream_loses_and_duplicates_nothing(
    leader_kafka: LocalKafka, leader_clusters: dict[str, str], mode: str
) -> None:
    _run(leader_clusters, mode, "kill-src-leader", _kill_leader_and_start_again(leader_kafka, "src", str), None)


@pytest.mark.parametrize("mode", MODES)
def test_the_target_leader_sigkilled_mid_stream_loses_and_duplicates_nothing(
    leader_kafka: LocalKafka, leader_clusters: dict[str, str], mode: str
) -> None:
    fault = _kill_leader_and_start_again(leader_kafka, "dst", lambda topic: f"src.{topic}")
    _run(leader_clusters, mode, "kill-dst-leader", fault, None)


@pytest.mark.parametrize("mode", MODES)
def test_a_rolling_restart_of_both_clusters_loses_and_duplicates_nothing(
    leader_kafka: LocalKafka, leader_clusters: dict[str, str], mode: str
) -> None:
    def restart(alias: str, node: int) -> None:
        leader_kafka.stop_broker(alias, node)
        leader_kafka.start_broker(alias, node, timeout=180)
        bootstrap = leader_kafka.bootstraps()[alias]
        wait_until(lambda: _in_sync(bootstrap), timeout=120, interval=0.5, what=f"{alias} in sync")

    def fault(_topic: str) -> None:
        # Node k of both clusters at once: a broker's start takes 30-60 s on this busy 2-core machine.
        for node in leader_kafka.node_ids("src"):
            with ThreadPoolExecutor(2) as pool:
                list(pool.map(restart, ("src", "dst"), (node, node)))

    _run(leader_clusters, mode, "rolling", fault, None)


@pytest.mark.parametrize("mode", MODES)
def test_a_reassignment_of_the_source_partitions_loses_and_duplicates_nothing(
    leader_kafka: LocalKafka, leader_clusters: dict[str, str], tmp_path: Path, mode: str
) -> None:
    # Two replicas each, so that moving one means copying its log to the third broker; the leader moves off too.
    assignment = [[1, 2], [2, 3]]
    moved = [[3, 2], [1, 3]]

    def fault(topic: str) -> None:
        plan = tmp_path / "reassignment.json"
        partitions = [{"topic": topic, "partition": p, "replicas": r} for p, r in enumerate(moved)]
        plan.write_text(json.dumps({"version": 1, "partitions": partitions}))
        tool, env = leader_kafka.runtime().tool("kafka-reassign-partitions", tmp_path)
        bootstrap = leader_clusters["src"]
        run = [*tool, "--bootstrap-server", bootstrap, "--reassignment-json-file", str(plan)]
        done = subprocess.run([*run, "--execute"], env=env, capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stdout + done.stderr

        def finished() -> bool:
            now = _partitions(bootstrap, topic)
            return all(now[p].replicas == r and sorted(now[p].isrs) == sorted(r) for p, r in enumerate(moved))

        wait_until(finished, timeout=120, interval=0.5, what="the reassignment")
        assert _leader(bootstrap, topic, 0) != 1, "the leader of partition 0 moved off the broker it left"
        subprocess.run([*run, "--verify"], env=env, capture_output=True, timeout=120, check=False)

    _run(leader_clusters, mode, "reassign", fault, assignment)
