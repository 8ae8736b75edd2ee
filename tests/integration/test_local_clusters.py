"""The local clusters are real, independent Kafka clusters: data, headers and topic configs on each."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import ConfigResource, ResourceType

from localkafka.dist import runtime
from localkafka.manager import default_cache_dir
from tests.support.kafka import admin, consume_all, create_topic, end_offsets, unique_topic

pytestmark = pytest.mark.kafka


def test_there_are_three_independent_clusters(kafka_clusters: dict[str, str]) -> None:
    assert len(kafka_clusters) >= 3
    cluster_ids = {admin(b).list_topics(timeout=10).cluster_id for b in kafka_clusters.values()}
    assert len(cluster_ids) == len(kafka_clusters)


@pytest.mark.parametrize("alias", ["us-west", "us-east"])
def test_records_with_headers_round_trip_on_each_cluster(kafka_clusters: dict[str, str], alias: str) -> None:
    bootstrap = kafka_clusters[alias]
    topic = unique_topic("headers")
    create_topic(bootstrap, topic, partitions=2)
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    sent = [
        (f"k{i}".encode(), f"v{i}-{alias}".encode(), [("h", bytes([i])), ("trace", b"\x00\xff")]) for i in range(50)
    ]
    for key, value, headers in sent:
        producer.produce(topic, value=value, key=key, headers=headers, partition=int(key[1:]) % 2)
    assert producer.flush(30) == 0

    records = consume_all(bootstrap, topic, partitions=2, expected=50)
    got = sorted((m.key(), m.value(), m.headers()) for m in records)
    assert got == sorted(sent)
    assert end_offsets(bootstrap, topic, [0, 1]) == {0: 25, 1: 25}


def test_a_topic_created_with_a_config_has_it_on_each_cluster(kafka_clusters: dict[str, str]) -> None:
    for alias in ("us-west", "us-east"):
        bootstrap = kafka_clusters[alias]
        topic = unique_topic("cfg")
        create_topic(bootstrap, topic, partitions=3, config={"cleanup.policy": "compact", "retention.ms": "123456"})
        resource = ConfigResource(ResourceType.TOPIC, topic)
        client = admin(bootstrap)
        configs = client.describe_configs([resource])[resource].result(timeout=10)
        assert configs["cleanup.policy"].value == "compact"
        assert configs["retention.ms"].value == "123456"
        other = next(b for a, b in kafka_clusters.items() if a != alias)
        assert topic not in admin(other).list_topics(timeout=10).topics


def test_kafka_4_clusters_run_transaction_version_2_and_the_kip_848_group_protocol(
    kafka_clusters: dict[str, str], kafka_versions: dict[str, str], tmp_path: Path
) -> None:
    """The exactly-once and failover tests on a 4.x cluster run with transactions version 2 (KIP-890: an epoch bump
    at every commit) and the KIP-848 consumer group protocol finalized, as Kafka's own kafka-features reports them;
    2.3.0 has neither (it predates the feature API)."""
    alias = next((a for a, v in kafka_versions.items() if v.startswith("4.")), None)
    if alias is None:
        pytest.skip("no Kafka 4 cluster in this run")
    tool, env = runtime(kafka_versions[alias], default_cache_dir()).tool("kafka-features", tmp_path)
    out = subprocess.run(
        [*tool, "--bootstrap-server", kafka_clusters[alias], "describe"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    finalized = {
        line.split()[1]: line.split("FinalizedVersionLevel:")[1].split()[0]
        for line in out.splitlines()
        if line.startswith("Feature:")
    }
    assert finalized["transaction.version"] == "2"
    assert finalized["group.version"] == "1"  # the consumer protocol (KIP-848) is on
