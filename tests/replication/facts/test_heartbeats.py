"""The heartbeat collector's consumer logs through the project's throttled librdkafka log."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from replication.clientlog import LIBRDKAFKA_LOG
from replication.facts import heartbeats
from replication.facts.heartbeats import HeartbeatCollector


@dataclass
class Metadata:
    topics: dict[str, Any] = field(default_factory=dict)


class RecordingConsumer:
    """Stands in for confluent_kafka.Consumer: keeps the config it was built with; a cluster with no topics."""

    built: list[dict[str, Any]] = []

    def __init__(self, config: dict[str, Any]) -> None:
        self.built.append(config)

    def list_topics(self, timeout: float) -> Metadata:
        return Metadata()

    def close(self) -> None:
        pass


def test_the_heartbeat_consumer_logs_through_the_throttled_client_log(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    monkeypatch.setattr(heartbeats, "Consumer", RecordingConsumer)
    monkeypatch.setattr(RecordingConsumer, "built", [])
    collector = HeartbeatCollector({"us-west": {"bootstrap.servers": "127.0.0.1:1"}}, str(tmp_path))

    assert collector.run_once(timeout=0.1) == 0
    collector.close()

    (config,) = RecordingConsumer.built
    assert config["logger"] is LIBRDKAFKA_LOG
    assert config["bootstrap.servers"] == "127.0.0.1:1" and config["group.id"] == collector.group_id
