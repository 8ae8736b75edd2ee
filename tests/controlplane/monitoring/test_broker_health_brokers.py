"""Broker health read from real brokers by the cluster-observations job: a topic whose min.insync.replicas exceeds
its in-sync replicas on a one-broker cluster, and a three-broker cluster with one broker stopped (its partitions
under-replicated, those it alone held offline, the broker counted down)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from confluent_kafka.admin import NewTopic

from controlplane.clusters.models import Cluster
from controlplane.monitoring import tasks
from controlplane.monitoring.models import BrokerHealth
from controlplane.monitoring.services import brokerhealth
from localkafka import LocalKafka
from localkafka.dist import default_version
from localkafka.manager import ClusterChoice
from tests.conftest import fresh_local_kafka
from tests.support.kafka import admin, create_topic, unique_topic, wait_until

pytestmark = pytest.mark.django_db
THREE_BROKERS_PORT_OFFSET = 20  # beside the test clusters' and the secured clusters' ports


def observed(cluster: Cluster) -> dict[str, object]:
    tasks.observe()
    return brokerhealth.figures(BrokerHealth.objects.get(cluster=cluster))


def test_a_topic_whose_min_isr_exceeds_its_replicas_counts_under_min_isr(kafka_clusters: dict[str, str]) -> None:
    bootstrap = kafka_clusters["us-west"]
    cluster = Cluster.objects.create(alias="us-west", bootstrap_servers=bootstrap)
    before = observed(cluster)
    topic = unique_topic("min-isr")
    create_topic(bootstrap, topic, partitions=3, config={"min.insync.replicas": "2"})
    wait_until(lambda: topic in admin(bootstrap).list_topics(timeout=10).topics, what=f"{topic} in the metadata")

    after = observed(cluster)

    client = admin(bootstrap)
    described = client.describe_cluster(request_timeout=10).result()
    assert after["brokers_up"] == len(client.list_topics(timeout=10).brokers) == 1
    assert after["controller_id"] == described.controller.id
    assert after["partitions"] == before["partitions"] + 3  # type: ignore[operator]
    assert after["under_min_isr"] == before["under_min_isr"] + 3  # type: ignore[operator]
    assert (after["under_replicated"], after["offline"], after["brokers_down"], after["reason"]) == (0, 0, 0, "")
    named = set(after["examples"]["under_min_isr"])  # type: ignore[index]
    # The first EXAMPLES partitions are named, sorted: the topic's are among them when they fit, else the list is full.
    if after["under_min_isr"] <= brokerhealth.EXAMPLES:  # type: ignore[operator]
        assert {f"{topic}-{p}" for p in range(3)} <= named
    else:
        assert len(named) == brokerhealth.EXAMPLES


@pytest.fixture(scope="module")
def three_brokers() -> Iterator[tuple[LocalKafka, str]]:
    base = int(os.environ.get("MIRRORPLANE_TEST_PORT_BASE", "29092")) + THREE_BROKERS_PORT_OFFSET
    kafka = fresh_local_kafka("three-brokers", base)
    try:
        # Three JVMs form a quorum before any answers: on a loaded machine that takes minutes, not seconds.
        bootstrap = kafka.up({"trio": ClusterChoice(default_version(), brokers=3)}, timeout=360)["trio"]
        yield kafka, bootstrap
    finally:
        kafka.down(purge=True)


def test_a_stopped_broker_leaves_partitions_under_replicated_offline_and_itself_down(
    three_brokers: tuple[LocalKafka, str],
) -> None:
    kafka, bootstrap = three_brokers
    cluster = Cluster.objects.create(alias="trio", bootstrap_servers=bootstrap)
    nodes = kafka.node_ids("trio")
    stopped = nodes[-1]
    client = admin(bootstrap)
    spread, alone = unique_topic("spread"), unique_topic("alone")
    futures = client.create_topics(
        [
            NewTopic(spread, 2, 3, config={"min.insync.replicas": "3"}),
            # min.insync.replicas 1: the cluster's default (2 on several brokers) would count it under min ISR already.
            NewTopic(alone, 2, replica_assignment=[[stopped], [stopped]], config={"min.insync.replicas": "1"}),
        ]
    )
    for future in futures.values():
        future.result(30)
    wait_until(lambda: {spread, alone} <= set(client.list_topics(timeout=10).topics), what="both topics listed")

    healthy = observed(cluster)
    assert (healthy["brokers_up"], healthy["brokers_down"], healthy["brokers_known"]) == (3, 0, 3)
    assert (healthy["under_replicated"], healthy["offline"], healthy["under_min_isr"]) == (0, 0, 0)
    assert healthy["controller_id"] in nodes

    kafka.stop_broker("trio", stopped)
    wait_until(lambda: len(client.list_topics(timeout=10).brokers) == 2, timeout=60, what="two brokers listed")
    metadata = client.list_topics(timeout=10)
    wait_until(
        lambda: all(stopped not in p.isrs for p in client.list_topics(timeout=10).topics[spread].partitions.values()),
        timeout=60,
        what=f"broker {stopped} out of {spread}'s ISR",
    )

    sick = observed(cluster)

    metadata = client.list_topics(timeout=10)
    assert (sick["brokers_up"], sick["brokers_down"], sick["missing_brokers"]) == (2, 1, [stopped])
    assert sick["controller_id"] in set(metadata.brokers)
    examples = sick["examples"]
    assert isinstance(examples, dict)
    assert sick["offline"] == 2 and examples["offline"] == [f"{alone}-0", f"{alone}-1"]
    assert {f"{spread}-0", f"{spread}-1"} <= set(examples["under_replicated"])
    # Every partition but the offline ones: the spread topic's two and any internal topic's (all replicated on 3).
    urp = sum(len(p.isrs) < len(p.replicas) for t in metadata.topics.values() for p in t.partitions.values())
    assert sick["under_replicated"] == urp
    # Under min ISR: the spread topic's partitions (ISR 2 < 3) and the leaderless ones.
    assert examples["under_min_isr"] == sorted([f"{spread}-0", f"{spread}-1", f"{alone}-0", f"{alone}-1"])
    assert sick["under_min_isr"] == 4
