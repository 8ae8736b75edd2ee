"""Beat's heartbeat collection: every registered cluster's heartbeat topics land in the facts lake (real brokers)."""

from __future__ import annotations

import contextlib
import random
import time
from pathlib import Path
from typing import Any

import pyarrow.dataset as ds
import pytest
from confluent_kafka import KafkaException, Producer

from controlplane.clusters.models import Cluster
from controlplane.reports import services
from replication.mm2.records import Heartbeat
from tests.support.kafka import create_topic, wait_until

pytestmark = pytest.mark.django_db


def produce_heartbeat(bootstrap: str, heartbeat: Heartbeat, topic: str) -> None:
    with contextlib.suppress(KafkaException):  # another test (or run, on reused clusters) created it
        create_topic(bootstrap, topic)
    producer = Producer({"bootstrap.servers": bootstrap})
    producer.produce(topic, heartbeat.value_bytes(), heartbeat.key_bytes())
    assert producer.flush(30) == 0


def test_heartbeats_of_registered_clusters_reach_the_lake(
    kafka_clusters: dict[str, str], settings: Any, tmp_path: Path
) -> None:
    settings.STATE_DIR, settings.MIRRORPLANE_FACTS_LAKE = tmp_path, ""
    for alias in ("us-west", "us-east"):
        Cluster.objects.create(alias=alias, bootstrap_servers=kafka_clusters[alias])
    stamp = int(time.time() * 1000) - random.randint(0, 10**6)
    # us-west->us-east's reverse beat, written into us-west's own heartbeats and replicated to us-east. A cluster's
    # own heartbeats are not read: they have made no hop.
    produce_heartbeat(kafka_clusters["us-east"], Heartbeat("us-east", "us-west", stamp), "us-west.heartbeats")
    produce_heartbeat(kafka_clusters["us-west"], Heartbeat("us-east", "us-west", stamp + 1), "heartbeats")
    # A cluster started a moment ago may answer NOT_COORDINATOR for the collector's group: the beat reads again at
    # its next run, as this does (a pass that failed committed nothing, so the next one reads the same heartbeat).
    wait_until(lambda: services.collect_heartbeats() >= 1, timeout=60, interval=1, what="the heartbeat collected")
    arrivals = ds.dataset(tmp_path / "lake" / "heartbeats", format="parquet", partitioning="hive").to_table()
    assert stamp in arrivals.column("timestamp").to_pylist()
    assert stamp + 1 not in arrivals.column("timestamp").to_pylist()
    settings.MIRRORPLANE_FACTS_ENABLED = False
    assert services.collect_heartbeats() == 0
