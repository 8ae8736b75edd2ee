"""End to end on the real clusters: A->B->C replicated by the engine with the facts writer on, heartbeats
collected from every cluster, then the latency, topology and audit jobs on the lake the run produced."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import NewTopic
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from replication.analytics.jobs import run_job
from replication.facts.heartbeats import HeartbeatCollector
from replication.facts.writer import facts_writer
from replication.mm2.policy import HEARTBEATS_TOPIC
from replication.mm2.records import Heartbeat
from replication.task.replicationtask import ReplicationTask
from tests.analytics.conftest import spark  # noqa: F401  (the one shared SparkSession)
from tests.support.kafka import admin, create_topic, end_offsets, topic_partitions, unique_topic, wait_until
from tests.support.replication import drive, make_flow, new_task, produce_known

pytestmark = [pytest.mark.kafka, pytest.mark.spark]
RECORDS = 2000
BEATS = 5


def _emit_heartbeats(bootstrap: str, source: str, target: str) -> None:
    """What the heartbeat emitter of source->target writes into its source cluster's `heartbeats`: (target,
    source, now), as MM2's heartbeat connector of the reverse pair does."""
    client = admin(bootstrap)
    try:
        config = {"cleanup.policy": "compact"}
        client.create_topics([NewTopic(HEARTBEATS_TOPIC, 1, 1, config=config)])[HEARTBEATS_TOPIC].result(timeout=30)
    except KafkaException as exc:
        if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
            raise
    wait_until(lambda: topic_partitions(bootstrap, HEARTBEATS_TOPIC) > 0, what="the heartbeats topic")
    producer = Producer({"bootstrap.servers": bootstrap})
    for _ in range(BEATS):
        beat = Heartbeat(target, source, int(time.time() * 1000))
        key, value = beat.to_bytes()
        producer.produce(HEARTBEATS_TOPIC, value, key, 0, timestamp=beat.timestamp)
        time.sleep(0.01)  # distinct heartbeat timestamps
    assert producer.flush(30) == 0


def _caught_up(task: ReplicationTask, bootstrap: str, topic: str) -> bool:
    """The task has every record the source topic holds now acknowledged by its target."""
    partitions = topic_partitions(bootstrap, topic)
    if not partitions:
        return False
    ends = end_offsets(bootstrap, topic, range(partitions))
    states = [task.states.get((topic, p)) for p in range(partitions)]
    return all(s is not None and s.acked_next >= ends[p] for p, s in enumerate(states))


def test_a_chain_replicated_by_the_engine_gives_its_hops_latency_and_a_complete_audit(
    kafka_clusters: dict[str, str],
    spark: SparkSession,  # noqa: F811
    tmp_path: Path,
) -> None:
    uid = uuid.uuid4().hex[:6]
    a, b, c = f"w{uid}", f"e{uid}", f"k{uid}"  # fresh aliases: nothing else on the shared clusters uses them
    clusters = {a: kafka_clusters["us-west"], b: kafka_clusters["us-east"], c: kafka_clusters["backup"]}
    topic, lake = unique_topic("chain"), str(tmp_path / "lake")
    since = datetime.now(UTC) - timedelta(seconds=1)
    create_topic(clusters[a], topic, partitions=4)
    produce_known(clusters[a], topic, partitions=4, count=RECORDS, timestamp_step_ms=0)  # no future timestamps
    _emit_heartbeats(clusters[a], a, b)
    # Both ways of turning facts on: the facts.lake property (the task makes and closes the writer) ...
    ab = new_task(make_flow(clusters, a, b, f"{topic}|{HEARTBEATS_TOPIC}", facts_lake=lake))
    bc_flow = make_flow(clusters, b, c, rf"{a}\.({topic}|{HEARTBEATS_TOPIC})")
    writers = [facts_writer(bc_flow, 0, lake, interval=0.5)]  # ... and passing a writer to a task as a listener
    bc = new_task(bc_flow, listeners=writers)
    try:
        drive(
            [ab, bc],
            lambda: (
                _caught_up(ab, clusters[a], topic)
                and _caught_up(ab, clusters[a], HEARTBEATS_TOPIC)
                and _caught_up(bc, clusters[b], f"{a}.{topic}")
                and _caught_up(bc, clusters[b], f"{a}.{HEARTBEATS_TOPIC}")
            ),
            timeout=180,
            what="records and heartbeats through A->B->C",
        )
    finally:
        for task in (ab, bc):
            task.close()
        for writer in writers:
            writer.close()
    assert sum(end_offsets(clusters[c], f"{b}.{a}.{topic}", range(4)).values()) == RECORDS

    collector = HeartbeatCollector(
        {alias: {"bootstrap.servers": servers} for alias, servers in clusters.items()},
        lake,
        group_id=f"mp-test-collector-{uid}",
        sources={a, b},
    )
    try:
        assert collector.run_once() == 2 * BEATS  # in B's a.heartbeats and C's b.a.heartbeats (not A's own)
    finally:
        collector.close()
    until = datetime.now(UTC) + timedelta(seconds=1)
    out = tmp_path / "out"

    topology = run_job("topology", lake, str(out / "topology"), since, until, spark=spark, dead_after=600)
    assert topology["hops"] == {a: {b: 1, c: 2}}
    assert topology["nodes"] == sorted([a, b, c])
    assert (topology["diamonds"], topology["cycles"]) == ([], [])
    assert (topology["dead_links"], topology["silent_flows"], topology["unconfigured_flows"]) == ([], [], [])

    audit = run_job("audit", lake, str(out / "audit"), since, until, spark=spark)
    assert (audit["missing"], audit["windows_with_loss"], audit["duplicates"]) == (0, 0, 0)
    assert audit["completeness_pct"] == 100.0
    per_topic = (
        spark.read.parquet(str(out / "audit" / "windows"))
        .where(F.col("topic").isin(topic, f"{a}.{topic}"))
        .groupBy("flow", "topic")
        .agg(F.sum("source_records").alias("source"), F.sum("target_records").alias("target"))
    )
    assert {tuple(r) for r in per_topic.collect()} == {
        (f"{a}->{b}", topic, RECORDS, RECORDS),
        (f"{b}->{c}", f"{a}.{topic}", RECORDS, RECORDS),
    }

    latency = run_job("latency", lake, str(out / "latency"), since, until, spark=spark)
    assert {f["flow"] for f in latency["flows"]} == {f"{a}->{b}", f"{b}->{c}"}
    paths = {(p["derived_from"], p["path"]): p for p in latency["end_to_end"]}
    for kind in ("records", "heartbeats"):
        chain = paths[(kind, f"{a}->{b}->{c}")]
        assert chain["hops"] == 2 and chain["samples"] > 0 and 0 <= chain["latency_ms_p50"] <= chain["latency_ms_max"]
    assert paths[("heartbeats", f"{a}->{b}->{c}")]["samples"] == BEATS
