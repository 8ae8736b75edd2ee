"""A consumer group to reset on real brokers: a topic of three partitions with RECORDS records each at known
timestamps, and an EMPTY group that committed COMMITTED; shared by the reset's API test and its page's test."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, Producer, TopicPartition

from controlplane.clusters.models import Cluster
from tests.support.kafka import admin, create_topic

RECORDS = 10  # per partition, offsets 0 to 9
BASE_MS = 1_700_000_000_000  # record n of every partition has timestamp BASE_MS + n seconds (2023-11-14T22:13:20Z)
COMMITTED = {0: 3, 1: 5, 2: 10}


@dataclass
class Seeded:
    cluster: Cluster
    topic: str
    group: str

    def url(self, preview: bool = True) -> str:
        tail = "preview/" if preview else ""
        return f"/api/v1/clusters/{self.cluster.pk}/groups/{self.group}/reset-offsets/{tail}"

    @property
    def bootstrap(self) -> str:
        return self.cluster.bootstrap_servers


def commit(bootstrap: str, group: str, topic: str, offsets: dict[int, int]) -> None:
    """Commit as a client outside the group's membership (a simple commit): the group stays EMPTY."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        consumer.commit(offsets=[TopicPartition(topic, p, o) for p, o in offsets.items()], asynchronous=False)
    finally:
        consumer.close()


def committed(bootstrap: str, group: str) -> dict[int, int]:
    client = admin(bootstrap)
    future = client.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)], request_timeout=10)[group]
    return {tp.partition: tp.offset for tp in future.result(timeout=15).topic_partitions if tp.offset >= 0}


def seed(kafka_clusters: dict[str, str]) -> Seeded:
    """A topic of three partitions, RECORDS records each at known timestamps, and an EMPTY group at COMMITTED."""
    tag = uuid.uuid4().hex[:8]
    cluster = Cluster.objects.create(alias=f"reset{tag}", bootstrap_servers=kafka_clusters["us-west"])
    topic, group = f"reset-{tag}-orders", f"reset-{tag}-billing"
    create_topic(cluster.bootstrap_servers, topic, partitions=3)
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers})
    for partition in COMMITTED:
        for n in range(RECORDS):
            producer.produce(topic, value=b"x", partition=partition, timestamp=BASE_MS + n * 1000)
    assert producer.flush(30) == 0
    commit(cluster.bootstrap_servers, group, topic, COMMITTED)
    return Seeded(cluster, topic, group)
