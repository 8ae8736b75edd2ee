"""A replicated flow whose remote partition does not start at offset 0: three records were in the remote topic
before replication began, so every copy sits 3 offsets past its original, and a test that reads the wrong side or
skips the offset syncs sees it."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

from confluent_kafka import KafkaException, Producer
from confluent_kafka.admin import AdminClient

from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from controlplane.flows.services import flow_config
from replication.kafka.internaltopics import OFFSET_SYNCS_CONFIG, ensure_topic, offset_syncs_cluster, offset_syncs_topic
from replication.mm2.records import OffsetSync
from tests.support.kafka import create_topic, end_offsets, unique_topic
from tests.support.translation import replicate

SHIFT = 3  # records already in the remote topic before replication
COUNT = 10
Record = tuple[bytes, bytes, list[tuple[str, bytes]], int]


@dataclass(frozen=True)
class Replicated:
    flow: Flow
    topic: str
    remote: str
    records: list[Record]  # key, value, headers, timestamp of source offsets 0..COUNT-1


def known_records(start_ms: int) -> list[Record]:
    """Record i: a text key, a JSON value, a text header and a binary one, CreateTime start_ms + i seconds."""
    return [
        (
            f"order-{i}".encode(),
            json.dumps({"id": i, "item": "widget", "qty": i * 2}).encode(),
            [("trace", f"t-{i}".encode()), ("bin", bytes([i, 0, 255]))],
            start_ms + i * 1000,
        )
        for i in range(COUNT)
    ]


def produce(bootstrap: str, topic: str, records: list[Record]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for key, value, headers, timestamp in records:
        producer.produce(topic, value, key, 0, headers=headers, timestamp=timestamp)
    assert producer.flush(30) == 0


def replicated_flow(kafka_clusters: dict[str, str]) -> Replicated:
    west = Cluster.objects.create(alias="us-west", bootstrap_servers=kafka_clusters["us-west"])
    east = Cluster.objects.create(alias="us-east", bootstrap_servers=kafka_clusters["us-east"])
    topic = unique_topic("records")
    remote = f"us-west.{topic}"
    flow = Flow.objects.create(source=west, target=east, topics=[topic], emit_heartbeats_enabled=False)
    create_topic(kafka_clusters["us-west"], topic)
    create_topic(kafka_clusters["us-east"], remote)
    now_ms = int(time.time() * 1000)
    # Current timestamps: the brokers delete records older than retention.ms, and the log start would move.
    produce(kafka_clusters["us-east"], remote, [(b"old", b"old", [], now_ms) for _ in range(SHIFT)])
    records = known_records(now_ms - 60_000)
    produce(kafka_clusters["us-west"], topic, records)

    def caught_up() -> bool:
        try:
            return end_offsets(kafka_clusters["us-east"], remote, [0]) == {0: SHIFT + COUNT}
        except KafkaException:
            return False

    replicate(flow_config(flow), caught_up, what=f"{remote} caught up")
    return Replicated(flow, topic, remote, records)


def mm2_synced_flow(kafka_clusters: dict[str, str], syncs: list[tuple[int, int]]) -> Replicated:
    """A flow whose copies (SHIFT + 2 unrelated records first, then records 0..COUNT-1 in order) and offset syncs
    are written as MirrorMaker 2 writes them: syncs without Mirrorplane's header, one now and then."""
    west = Cluster.objects.create(alias="us-west", bootstrap_servers=kafka_clusters["us-west"])
    east = Cluster.objects.create(alias="us-east", bootstrap_servers=kafka_clusters["us-east"])
    topic = unique_topic("records-mm2")
    remote = f"us-west.{topic}"
    flow = Flow.objects.create(source=west, target=east, topics=[topic], emit_heartbeats_enabled=False)
    config = flow_config(flow)
    create_topic(kafka_clusters["us-west"], topic)
    create_topic(kafka_clusters["us-east"], remote)
    now_ms = int(time.time() * 1000)
    records = known_records(now_ms - 60_000)
    produce(kafka_clusters["us-west"], topic, records)
    unrelated = [(b"other", b"other", [], now_ms) for _ in range(SHIFT + 2)]
    produce(kafka_clusters["us-east"], remote, unrelated + records)
    cluster = offset_syncs_cluster(config)
    ensure_topic(AdminClient(dict(cluster.client)), offset_syncs_topic(config), OFFSET_SYNCS_CONFIG)
    producer = Producer(dict(cluster.client))
    for upstream, downstream in syncs:
        sync = OffsetSync(topic, 0, upstream, downstream)
        producer.produce(offset_syncs_topic(config), sync.value_bytes(), sync.key_bytes(), 0)
    assert producer.flush(30) == 0
    return Replicated(flow, topic, remote, records)
