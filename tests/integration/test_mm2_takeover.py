"""Taking over from a running MirrorMaker 2: Apache's MM2 copies a topic while it is being written, is SIGKILLed
after writing past its last commit, and Mirrorplane continues from MM2's committed offsets. Every source record is
then at the target exactly once, in order per partition; the flow's checkpoints go on in MM2's checkpoints topic."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Message, Producer, TopicPartition

from controlplane.celery import app
from controlplane.core.permissions import ADMIN
from controlplane.flows import services
from controlplane.flows.models import Flow
from localkafka.mirrormaker2 import MirrorMaker2, dedicated_properties, offsets_storage_topic, properties_text
from replication.config.mm2properties import load_file
from replication.mm2.properties import parse_properties
from replication.mm2.records import Checkpoint
from replication.mm2.takeover import committed_positions
from replication.task.takeover import TakeoverError, read_topic, take_over
from tests.controlplane.api.base import client_for, make_user
from tests.support.kafka import consume_to_end, create_topic, end_offsets, unique_topic, wait_until
from tests.support.replication import drive, new_task, start_replicator

PARTITIONS = 3
Copy = tuple[bytes | None, bytes | None]


class Feed:
    """Keyed, numbered records written to every partition of a topic from a thread, until stopped."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5})
        self.topic = topic
        self.sent = 0
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self.stopping.is_set():
            for _ in range(30):
                i = self.sent
                self.producer.produce(self.topic, f"value-{i}".encode(), f"key-{i}".encode(), i % PARTITIONS)
                self.sent += 1
            self.producer.poll(0)
            self.stopping.wait(0.05)
        assert self.producer.flush(30) == 0

    def __enter__(self) -> Feed:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stopping.set()
        self.thread.join(60)


@pytest.fixture
def mm2_flow(kafka_clusters: dict[str, str], tmp_path: Path) -> tuple[Path, str, str, str, str]:
    """Fresh aliases (new internal topics), a source topic, and MM2's properties file for the flow."""
    uid = uuid.uuid4().hex[:8]
    source, target = f"src{uid}", f"dst{uid}"
    topic = unique_topic("takeover")
    create_topic(kafka_clusters["us-west"], topic, partitions=PARTITIONS)
    clusters = {source: kafka_clusters["us-west"], target: kafka_clusters["us-east"]}
    # Commits 4 s apart while records flow: a SIGKILL always leaves records written after the last commit.
    extra = {f"{source}->{target}.topics": topic, "offset.flush.interval.ms": "4000"}
    config = tmp_path / "mm2.properties"
    config.write_text(properties_text(dedicated_properties(clusters, [(source, target)], extra)))
    return config, source, target, topic, f"{source}.{topic}"


def _kill_mm2_past_its_commit(config: Path, workdir: Path, dst: str, source: str, topic: str) -> dict[int, int]:
    """Run MM2 until it committed once and wrote more after that commit; SIGKILL it. MM2's committed positions."""
    mm2 = MirrorMaker2(parse_properties(config.read_text(), []), workdir)
    remote = f"{source}.{topic}"
    target = {"bootstrap.servers": dst, "group.id": "mp-test-takeover"}
    mm2.start(timeout=300)  # its plugin scan alone took 60 s on a busy 2-core machine
    try:
        mm2.wait_for(lambda: _committed(target, source, topic), 120, "MM2's first commit")
        first = _committed(target, source, topic)
        mm2.wait_for(
            lambda: sum(_ends(dst, remote).values()) > sum(first.values()) + 300, 60, "records past the commit"
        )
    finally:
        mm2.kill()
    committed = _committed(target, source, topic)
    ends = _ends(dst, remote)
    assert sum(ends.values()) > sum(committed.values()), f"MM2 wrote nothing past its commit: {ends} {committed}"
    return committed


def _committed(target: dict[str, str], source: str, topic: str) -> dict[int, int]:
    """MM2's committed positions of `topic` (MM2 also copies the source's heartbeats topic)."""
    records = read_topic(target, offsets_storage_topic(source), 10) or []
    committed = committed_positions(((m.key(), m.value()) for m in records), source)
    return {p: n for (t, p), n in committed.items() if t == topic}


def _ends(bootstrap: str, topic: str) -> dict[int, int]:
    try:
        return end_offsets(bootstrap, topic, range(PARTITIONS), timeout=5)
    except Exception:  # not created yet
        return {}


def _by_partition(records: list[Message]) -> dict[int, list[Copy]]:
    result: dict[int, list[Copy]] = {p: [] for p in range(PARTITIONS)}
    for msg in records:
        result[msg.partition() or 0].append((msg.key(), msg.value()))
    return result


def _assert_exactly_once(src: str, dst: str, topic: str, remote: str) -> None:
    sent = _by_partition(consume_to_end(src, topic, PARTITIONS))
    copied = _by_partition(consume_to_end(dst, remote, PARTITIONS))
    for p in range(PARTITIONS):
        keys = [key for key, _ in copied[p]]
        duplicates = len(keys) - len(set(keys))
        skipped = len({key for key, _ in sent[p]} - set(keys))
        assert (duplicates, skipped) == (0, 0), f"partition {p}: {duplicates} duplicates, {skipped} skipped"
        assert copied[p] == sent[p], f"partition {p}: the target's records differ from the source's, or their order"


def test_the_runner_continues_mm2s_flow_without_a_duplicate_or_a_gap(
    kafka_clusters: dict[str, str], tmp_path: Path, mm2_flow: tuple[Path, str, str, str, str]
) -> None:
    config, source, _, topic, remote = mm2_flow
    src, dst = kafka_clusters["us-west"], kafka_clusters["us-east"]
    log = tmp_path / "runner.log"
    with Feed(src, topic):
        committed = _kill_mm2_past_its_commit(config, tmp_path, dst, source, topic)
        proc = start_replicator(config, log, "--take-over-from-mm2")
        try:
            wait_until(lambda: "taken over from MM2" in log.read_text() or proc.poll() is not None, 60)
            assert proc.poll() is None, log.read_text()[-3000:]
        except BaseException:
            proc.kill()
            raise
    try:
        sources = end_offsets(src, topic, range(PARTITIONS))
        wait_until(lambda: _ends(dst, remote) == sources or proc.poll() is not None, 120, 0.5, "the copy to end")
        assert proc.poll() is None, log.read_text()[-3000:]
        group = f"g-{uuid.uuid4().hex[:6]}"
        _commit_group(src, group, topic, {p: sources[p] for p in range(PARTITIONS)})
        cps = wait_until(lambda: _checkpoints(dst, source, group), 60, 0.5, f"checkpoints of {group}")
    finally:
        proc.terminate()
        proc.wait(60)
    text = log.read_text()
    for p, position in committed.items():
        assert f"{topic}-{p} -> {remote}: MM2 committed {position}," in text, text[-3000:]
    _assert_exactly_once(src, dst, topic, remote)
    # Checkpoints go on in MM2's checkpoints topic, for the remote topic, at the copies' end.
    ends = _ends(dst, remote)
    assert {(cp.topic, cp.partition): cp.downstream_offset for cp in cps} == {(remote, p): ends[p] for p in ends}


def test_a_takeover_without_mm2s_offsets_names_the_topic_and_stores_nothing(
    kafka_clusters: dict[str, str], tmp_path: Path, mm2_flow: tuple[Path, str, str, str, str]
) -> None:
    config, source, _, _, _ = mm2_flow
    (flow,) = load_file(config)
    with pytest.raises(TakeoverError, match=f"offsets storage topic mm2-offsets.{source}.internal does not exist"):
        take_over(flow)
    target_config = {"bootstrap.servers": kafka_clusters["us-east"], "group.id": "mp-test-takeover"}
    assert read_topic(target_config, f"mirrorplane-positions.{source}.internal", 10) is None


@pytest.mark.django_db(transaction=True)
def test_an_import_that_takes_over_seeds_the_flow_from_mm2_and_reports_each_partition(
    kafka_clusters: dict[str, str], tmp_path: Path, mm2_flow: tuple[Path, str, str, str, str]
) -> None:
    config, source, _, topic, remote = mm2_flow
    src, dst = kafka_clusters["us-west"], kafka_clusters["us-east"]
    with Feed(src, topic):
        committed = _kill_mm2_past_its_commit(config, tmp_path, dst, source, topic)
    client = client_for(make_user("takeover-admin", ADMIN))
    before = app.conf.task_always_eager
    app.conf.task_always_eager = True  # the job runs in this process, as a worker would run it
    try:
        answer = client.post("/api/v1/flows/import/?takeover=true", {"properties": config.read_text()}, format="json")
    finally:
        app.conf.task_always_eager = before
    assert answer.status_code == 201, answer.content
    job = client.get(answer.json()["takeover_job"]["url"]).json()
    assert job["state"] == "succeeded", job["error"]
    (result,) = job["result"]["flows"]
    starts = {p["partition"]: p for p in result["partitions"] if p["topic"] == topic}
    assert {p: row["committed"] for p, row in starts.items()} == committed
    assert all(row["start"] <= row["committed"] and row["downstream"] is not None for row in starts.values())
    flow = Flow.objects.select_related("source", "target").get(source__alias=source)
    assert not flow.paused  # resumed once its positions were stored
    task = new_task(services.flow_config(flow))
    try:
        sources = end_offsets(src, topic, range(PARTITIONS))
        drive([task], lambda: _ends(dst, remote) == sources, 120, "the copy to end")
    finally:
        task.close()
    _assert_exactly_once(src, dst, topic, remote)


def _commit_group(bootstrap: str, group: str, topic: str, offsets: dict[int, int]) -> None:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        consumer.commit(offsets=[TopicPartition(topic, p, o) for p, o in offsets.items()], asynchronous=False)
    finally:
        consumer.close()


def _checkpoints(dst: str, source: str, group: str) -> list[Checkpoint] | None:
    """The newest checkpoints of `group` in MM2's checkpoints topic, once every partition has one."""
    reader = {"bootstrap.servers": dst, "group.id": "mp-test-takeover"}
    records = read_topic(reader, f"{source}.checkpoints.internal", 10)
    latest: dict[tuple[str, int], Checkpoint] = {}
    for msg in records or []:
        cp = Checkpoint.from_bytes(msg.key(), msg.value())
        if cp.consumer_group_id == group:
            latest[(cp.topic, cp.partition)] = cp
    return list(latest.values()) if len(latest) == PARTITIONS else None
