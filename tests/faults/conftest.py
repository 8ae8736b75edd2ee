"""Fault injection gets clusters of its own: killing or freezing brokers must not disturb other tests."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from replication.localkafka import LocalKafka
from tests.conftest import fresh_local_kafka


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
    return fault_kafka.bootstraps()
