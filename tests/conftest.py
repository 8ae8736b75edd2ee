"""Session fixtures: real local Kafka clusters, started once per run (or reused via KAFKA_CLUSTERS)."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from localkafka import LocalKafka

TEST_ALIASES = ("us-west", "us-east", "backup")
REPO = Path(__file__).resolve().parent.parent


def pytest_configure(config: pytest.Config) -> None:
    """SIGTERM (a CI timeout, a killed run) ends the session like Ctrl-C, so fixtures stop their brokers."""

    def interrupt(*_: Any) -> None:
        raise KeyboardInterrupt("SIGTERM")

    signal.signal(signal.SIGTERM, interrupt)
    _private_facts_lake(config)


def _private_facts_lake(config: pytest.Config) -> None:
    """Flows write facts to <state dir>/lake by default; a run's flows (in this process and in the worker processes
    it starts, which inherit the variable) write to a lake of the run's own, never to the demo's in var/lake."""
    if "MIRRORPLANE_FACTS_LAKE" not in os.environ:
        lake = tempfile.mkdtemp(prefix="mirrorplane-test-lake-")
        config.add_cleanup(lambda: shutil.rmtree(lake, ignore_errors=True))
        os.environ["MIRRORPLANE_FACTS_LAKE"] = lake
    from django.conf import settings  # after pytest-django chose the settings module

    settings.MIRRORPLANE_FACTS_LAKE = os.environ["MIRRORPLANE_FACTS_LAKE"]


def fresh_local_kafka(name: str, broker_port_base: int) -> LocalKafka:
    """Clusters in a fixed state dir: whatever an earlier, killed run left there is stopped first (by PID)."""
    kafka = LocalKafka(REPO / "var" / name, broker_port_base=broker_port_base, zk_port_base=broker_port_base - 7000)
    kafka.down(purge=True)
    return kafka


def _parse_kafka_clusters(value: str) -> dict[str, str]:
    pairs = [item.split("=", 1) for item in value.split(",") if item.strip()]
    if any(len(pair) != 2 for pair in pairs):
        raise pytest.UsageError("KAFKA_CLUSTERS must look like 'us-west=127.0.0.1:19092,us-east=127.0.0.1:19093'")
    return {alias.strip(): bootstrap.strip() for alias, bootstrap in pairs}


@pytest.fixture(scope="session")
def local_kafka() -> Iterator[LocalKafka | None]:
    """The LocalKafka that owns the test clusters; None when KAFKA_CLUSTERS points at running ones."""
    if os.environ.get("KAFKA_CLUSTERS"):
        yield None
        return
    kafka = fresh_local_kafka("test-kafka", int(os.environ.get("MIRRORPLANE_TEST_PORT_BASE", "29092")))
    try:
        kafka.up(TEST_ALIASES)
        yield kafka
    finally:
        kafka.down(purge=True)


@pytest.fixture(scope="session")
def kafka_clusters(local_kafka: LocalKafka | None) -> dict[str, str]:
    """alias -> bootstrap servers of at least three independent real clusters."""
    if local_kafka is None:
        return _parse_kafka_clusters(os.environ["KAFKA_CLUSTERS"])
    return local_kafka.bootstraps()
