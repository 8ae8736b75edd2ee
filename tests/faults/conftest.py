"""Fault injection gets clusters of its own: killing or freezing brokers must not disturb other tests."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from localkafka import LocalKafka
from tests.conftest import fresh_local_kafka
from tests.support.kafka import admin, create_topic, unique_topic, wait_until


@pytest.fixture(scope="session")
def fault_kafka() -> Iterator[LocalKafka]:
    kafka = fresh_local_kafka("fault-kafka", int(os.environ.get("MIRRORPLANE_FAULT_PORT_BASE", "23092")))
    try:
        kafka.up(["src", "dst"])
        yield kafka
    finally:
        kafka.down(purge=True)


@pytest.fixture
def fault_clusters(fault_kafka: LocalKafka) -> dict[str, str]:
    """src and dst, with both brokers running (restarted if an earlier scenario left one down)."""
    for alias in ("src", "dst"):
        fault_kafka.restart_broker(alias)
    clusters = fault_kafka.bootstraps()
    for bootstrap in clusters.values():
        # A broker frozen past its ZooKeeper session (2.3.0) answers metadata calls before it can write to
        # ZooKeeper again, and a KRaft broker frozen past its controller lease is fenced until it registers again:
        # either way topic creation fails for a while, so wait until a topic can be created.
        wait_until(lambda b=bootstrap: _creates_topics(b), timeout=90, interval=1, what=f"{bootstrap} writable")
    return clusters


def _creates_topics(bootstrap: str) -> bool:
    topic, client = unique_topic("probe"), admin(bootstrap)  # keep the client: its futures die with it
    try:
        create_topic(bootstrap, topic, 1)
        client.delete_topics([topic])[topic].result(timeout=30)
    except Exception:
        return False
    return True
