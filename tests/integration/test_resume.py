"""Resuming on real brokers: what a killed task left at the target past its stored positions is not written again,
and a record another producer wrote there is reported, and never the reason to skip anything."""

from __future__ import annotations

from collections import Counter

import pytest
from confluent_kafka import Producer

from replication.config import FlowConfig
from replication.kafka.clients import position_reader_config
from replication.kafka.positions import Position, load, positions_topic
from replication.metrics.registry import MetricsRegistry
from replication.task.replicationtask import ReplicationTask
from tests.integration.test_offset_translation import check_every_position
from tests.support.kafka import consume_to_end, create_topic, end_offsets, unique_topic
from tests.support.replication import drive, make_flow, new_task, produce_known

pytestmark = pytest.mark.kafka


def _crashed_task(flow: FlowConfig, topic: str, src: str, dst: str) -> None:
    """A task stores its positions after 200 records per partition, replicates 300 more each and dies without
    storing them: 'SIGKILL' in process (no close(), so nothing more is stored)."""
    produce_known(src, topic, 2, 400)
    task = new_task(flow)
    ours = lambda: [s for k, s in task.states.items() if k[0] == topic]  # noqa: E731
    drive([task], lambda: len(ours()) == 2 and all(s.stored_next == 200 for s in ours()), what="200 stored")
    task._next_flush = float("inf")  # from here on the task stores nothing: what it writes is past its positions
    produce_known(src, topic, 2, 600, start=400)
    remote = f"us-west.{topic}"
    drive([task], lambda: sum(end_offsets(dst, remote, range(2)).values()) >= 1000, what="1000 at the target")
    task.producer.client.flush(30)
    task.consumer.close()


def _stored(flow: FlowConfig, topic: str) -> dict[int, Position]:
    stored = load(position_reader_config(flow, 0), positions_topic("us-west"), timeout=30)
    return {p: stored[(topic, p)] for p in range(2) if (topic, p) in stored}


def _resumed(flow: FlowConfig, metrics: MetricsRegistry) -> ReplicationTask:
    return new_task(flow, metrics=metrics)


def test_a_restarted_task_skips_exactly_the_records_the_target_holds_past_its_stored_positions(
    kafka_clusters: dict[str, str],
) -> None:
    src, dst = kafka_clusters["us-west"], kafka_clusters["backup"]
    topic = unique_topic("skip")
    create_topic(src, topic, partitions=2)
    flow = make_flow(kafka_clusters, "us-west", "backup", topic)
    _crashed_task(flow, topic, src, dst)
    assert {p: (pos.next_offset, pos.downstream) for p, pos in _stored(flow, topic).items()} == {
        0: (200, 200),
        1: (200, 200),
    }
    metrics = MetricsRegistry()
    task = _resumed(flow, metrics)
    try:
        states = {k[1]: s for k, s in task.states.items() if k[0] == topic}
        assert {p: (s.acked_next, s.stored_next) for p, s in states.items()} == {0: (500, 500), 1: (500, 500)}
        # The start is durable at once: a crash now would not verify (or copy) these 300 records again.
        assert {p: (pos.next_offset, pos.downstream) for p, pos in _stored(flow, topic).items()} == {
            0: (500, 500),
            1: (500, 500),
        }
        partitions = metrics.snapshot()["flows"][flow.name]["partitions"]
        assert [partitions[f"{topic}-{p}"]["resume-skipped-count"] for p in range(2)] == [300, 300]
        produce_known(src, topic, 2, 100, start=1000)
        drive([task], lambda: all(s.acked_next == 550 for s in states.values()), what="the new records")
    finally:
        task.close()
    # Every record once, in order; and the offset syncs cover the skipped records as if the killed task had
    # written them: every upstream position translates exactly.
    check_every_position(flow, topic, 2, "read_uncommitted")


def test_another_producers_record_past_the_stored_position_is_reported_and_nothing_is_skipped_past_it(
    kafka_clusters: dict[str, str],
) -> None:
    src, dst = kafka_clusters["us-west"], kafka_clusters["backup"]
    topic = unique_topic("foreign")
    remote = f"us-west.{topic}"
    create_topic(src, topic, partitions=2)
    flow = make_flow(kafka_clusters, "us-west", "backup", topic)
    produce_known(src, topic, 2, 400)
    task = new_task(flow)
    ours = lambda: [s for k, s in task.states.items() if k[0] == topic]  # noqa: E731
    drive([task], lambda: len(ours()) == 2 and all(s.stored_next == 200 for s in ours()), what="200 stored")
    task._next_flush = float("inf")
    other = Producer({"bootstrap.servers": dst})
    other.produce(remote, b"not from the source", b"intruder", 0)  # between the stored position and what follows
    assert other.flush(30) == 0
    produce_known(src, topic, 2, 600, start=400)
    drive([task], lambda: sum(end_offsets(dst, remote, range(2)).values()) >= 1001, what="1001 at the target")
    task.producer.client.flush(30)
    task.consumer.close()

    metrics = MetricsRegistry()
    resumed = _resumed(flow, metrics)
    try:
        partitions = metrics.snapshot()["flows"][flow.name]["partitions"]
        p0, p1 = partitions[f"{topic}-0"], partitions[f"{topic}-1"]
        assert (p0["resume-skipped-count"], p0["resume-mismatch-count"]) == (0, 1)
        assert f"{remote} [0] offset 200" in p0["last-resume-mismatch"]
        assert "its key differs" in p0["last-resume-mismatch"]  # the intruder's key
        assert (p1["resume-skipped-count"], p1["resume-mismatch-count"]) == (300, 0)
        states = {k[1]: s for k, s in resumed.states.items() if k[0] == topic}
        assert (states[0].acked_next, states[1].acked_next) == (200, 500)  # partition 0 copies its 300 again
        drive([resumed], lambda: all(s.stored_next == 500 for s in states.values()), what="all stored")
    finally:
        resumed.close()
    source = consume_to_end(src, topic, 2)
    target = consume_to_end(dst, remote, 2)
    for p, duplicates in ((0, 300), (1, 0)):
        want = Counter(m.value() for m in source if m.partition() == p)
        have = Counter(m.value() for m in target if m.partition() == p and m.key() != b"intruder")
        assert not want - have, f"partition {p}: records lost"
        assert sum((have - want).values()) == duplicates


def test_a_position_another_policy_stored_on_the_same_clusters_is_not_taken_for_lost_records(
    kafka_clusters: dict[str, str],
) -> None:
    # The positions topic is keyed by source partition: flows of one source and target share it. A flow whose
    # policy changed (or the identity flow of a browser test before an integration test, as in CI) stores positions
    # whose downstream offsets count another target topic. Read as this remote topic's, they once reported
    # "replicated records are gone from the target" and stopped the flow.
    src, dst = kafka_clusters["us-west"], kafka_clusters["backup"]
    topic = unique_topic("policies")
    create_topic(src, topic, partitions=1)
    create_topic(dst, topic, partitions=1)
    local = Producer({"bootstrap.servers": dst})
    for i in range(500):  # the identity policy's target topic also holds the target's own records
        local.produce(topic, f"local-{i}".encode(), partition=0)
    assert local.flush(30) == 0
    produce_known(src, topic, 1, 200)
    default = make_flow(kafka_clusters, "us-west", "backup", topic)
    first = new_task(default)
    drive([first], lambda: first.states[(topic, 0)].stored_next == 200, what="200 stored by the default policy")
    first.close()
    produce_known(src, topic, 1, 100, start=200)
    identity = make_flow(
        kafka_clusters, "us-west", "backup", topic, replication_policy_class="IdentityReplicationPolicy"
    )
    second = new_task(identity)
    drive([second], lambda: second.states[(topic, 0)].stored_next == 300, what="300 stored by the identity policy")
    second.close()
    stored = _stored(default, topic)[0]
    assert (stored.next_offset, stored.downstream, stored.remote) == (300, 600, topic)

    produce_known(src, topic, 1, 50, start=300)
    third = new_task(make_flow(kafka_clusters, "us-west", "backup", topic, on_data_loss="fail"))  # raises on loss
    try:
        state = third.states[(topic, 0)]
        assert state.acked_next == 300  # MM2's rule: the stored source position, whichever policy stored it
        drive([third], lambda: state.stored_next == 350, what="the default policy replicates on")
        assert third.faults.current is None
    finally:
        third.close()
    remote = [m.value() for m in consume_to_end(dst, f"us-west.{topic}", 1)]
    assert len(remote) == 250 and remote[-50:] == [m.value() for m in consume_to_end(src, topic, 1)][300:]


def test_a_partition_moved_to_a_running_task_starts_at_the_position_its_last_owner_stored(
    kafka_clusters: dict[str, str],
) -> None:
    """The control plane moves partitions between running tasks (tasks.max changed, a rebalance): the new owner adds
    them at a refresh, long after it read the stored positions at its start. It must start on what the last owner
    stored since. On the demo, tasks.max 3 -> 2 re-copied a moved partition from the source log start."""
    src, dst = kafka_clusters["us-west"], kafka_clusters["backup"]
    topic = unique_topic("moved")
    create_topic(src, topic, partitions=2)
    produce_known(src, topic, partitions=2, count=2_000)
    flow = make_flow(kafka_clusters, "us-west", "backup", topic)
    remote = f"us-west.{topic}"
    owned_by = {(topic, 0): 0, (topic, 1): 0}  # both partitions start on task 0
    tasks = [
        new_task(flow, task_id=i, owns=lambda t, p, i=i: owned_by.get((t, p)) == i, metrics=MetricsRegistry())
        for i in (1, 0)  # task 1 reads the (empty) positions first
    ]
    one, zero = tasks
    try:
        drive(tasks, lambda: sum(end_offsets(dst, remote, range(2)).values()) == 2_000, what="the first copy")
        zero.close()  # a clean stop: its positions are stored
        owned_by[(topic, 1)] = 1
        one.refresh()
        drive([one], lambda: one.states.get((topic, 1)) is not None and one.states[(topic, 1)].acked_next == 1_000)
        produce_known(src, topic, partitions=2, count=20, start=2_000)  # and it goes on from there
        drive([one], lambda: one.states[(topic, 1)].acked_next == 1_010, what="the next records")
    finally:
        one.close()
    got = Counter((msg.key(), msg.value()) for msg in consume_to_end(dst, remote, 2) if msg.partition() == 1)
    assert sum(got.values()) == 1_010 and len(got) == 1_010, f"{sum(got.values()) - len(got)} duplicates"
