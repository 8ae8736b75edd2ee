"""A cluster to browse on real brokers: a topic with known offsets per partition and a live consumer group with
known commits, shared by the browser API test and the browser page's test."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from confluent_kafka import Consumer, Producer, TopicPartition

from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from tests.support.kafka import admin, create_topic, wait_until

# Records produced per partition of the browsed topic; partition 0's first two are then deleted (start offset 2).
PRODUCED = {0: 5, 1: 0, 2: 7}
DELETED_BEFORE = {0: 2}
# What the group commits, from its one member, which is assigned all three partitions: partition 1 stays without.
COMMITTED = {0: 3, 2: 7}


@dataclass
class Browsed:
    """Clusters, a flow and a topic with known offsets, and a live consumer group with known commits."""

    source: Cluster
    target: Cluster
    flow: Flow
    topic: str
    group: str
    member: Consumer


def produce(bootstrap: str, topic: str, counts: dict[int, int]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for partition, count in counts.items():
        for n in range(count):
            producer.produce(topic, value=f"{partition}-{n}".encode(), partition=partition)
    assert producer.flush(30) == 0


def delete_records(bootstrap: str, topic: str, before: dict[int, int]) -> None:
    client = admin(bootstrap)
    futures = client.delete_records([TopicPartition(topic, p, offset) for p, offset in before.items()])
    for future in futures.values():
        future.result(timeout=30)


def join_and_commit(bootstrap: str, topic: str, group: str) -> Consumer:
    """A member of ``group`` assigned every partition of ``topic``, having committed COMMITTED (and nothing else)."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": group, "client.id": "browse-test", "enable.auto.commit": False}
    )
    consumer.subscribe([topic])
    wait_until(lambda: consumer.poll(0.2) is None and len(consumer.assignment()) == 3, what="the group's assignment")
    consumer.commit(offsets=[TopicPartition(topic, p, offset) for p, offset in COMMITTED.items()], asynchronous=False)
    return consumer


def seed(kafka_clusters: dict[str, str]) -> Browsed:
    """Clusters on the us-west and us-east brokers, a flow between them, and on the source a topic with known
    offsets and a group whose one member holds every partition and committed COMMITTED; close ``member`` after."""
    tag = uuid.uuid4().hex[:8]
    source = Cluster.objects.create(alias=f"src{tag}", bootstrap_servers=kafka_clusters["us-west"])
    target = Cluster.objects.create(alias=f"dst{tag}", bootstrap_servers=kafka_clusters["us-east"])
    topic, group = f"browse-{tag}-orders", f"browse-{tag}-billing"
    flow = Flow.objects.create(source=source, target=target, topics=[f"browse-{tag}-.*"])
    create_topic(source.bootstrap_servers, topic, partitions=3, config={"retention.ms": "3600000"})
    produce(source.bootstrap_servers, topic, PRODUCED)
    delete_records(source.bootstrap_servers, topic, DELETED_BEFORE)
    member = join_and_commit(source.bootstrap_servers, topic, group)
    return Browsed(source, target, flow, topic, group, member)
