"""Fakes of confluent-kafka's Message and Producer for unit tests of the hot path (no broker)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import KafkaError

from replication.config import ClusterConfig, FlowConfig


@dataclass
class FakeMessage:
    _topic: str
    _partition: int
    _offset: int
    _value: bytes | None = b"v"
    _key: bytes | None = b"k"
    _headers: list[tuple[str, bytes]] | None = None
    _timestamp: int = 1_700_000_000_000
    _error: KafkaError | None = None

    def topic(self) -> str:
        return self._topic

    def partition(self) -> int:
        return self._partition

    def offset(self) -> int:
        return self._offset

    def value(self) -> bytes | None:
        return self._value

    def key(self) -> bytes | None:
        return self._key

    def headers(self) -> list[tuple[str, bytes]] | None:
        return self._headers

    def timestamp(self) -> tuple[int, int]:
        return (1, self._timestamp)

    def error(self) -> KafkaError | None:
        return self._error

    def __len__(self) -> int:
        return len(self._value or b"")


@dataclass
class Produced:
    topic: str
    value: bytes | None
    key: bytes | None
    partition: int
    timestamp: int
    headers: Any
    callback: Callable[[KafkaError | None, Any], None] | None


@dataclass
class FakeProducer:
    """Records produce calls; deliveries happen only when a test says so."""

    produced: list[Produced] = field(default_factory=list)
    next_offsets: dict[tuple[str, int], int] = field(default_factory=dict)

    def produce(
        self,
        topic: str,
        value: bytes | None = None,
        key: bytes | None = None,
        partition: int = -1,
        on_delivery: Any = None,
        timestamp: int = 0,
        headers: Any = None,
    ) -> None:
        self.produced.append(Produced(topic, value, key, partition, timestamp, headers, on_delivery))

    def deliver_all(self, error: KafkaError | None = None) -> None:
        """Acknowledge every produced record in order, as the broker would, calling the callbacks."""
        for record in self.produced:
            offset = self.next_offsets.get((record.topic, record.partition), 0)
            self.next_offsets[(record.topic, record.partition)] = offset + 1
            if record.callback is not None:
                record.callback(error, FakeMessage(record.topic, record.partition, offset))
        self.produced.clear()

    def poll(self, timeout: float = 0) -> int:
        return 0

    def flush(self, timeout: float = 0) -> int:
        return 0


class FakeClients:
    def __init__(self) -> None:
        self.producer_instance = FakeProducer()

    def producer(self, flow: FlowConfig, task_id: int, error_cb: Any = None) -> FakeProducer:
        return self.producer_instance


def flow(**overrides: Any) -> FlowConfig:
    return FlowConfig(
        ClusterConfig("us-west", {"bootstrap.servers": "a:1"}),
        ClusterConfig("us-east", {"bootstrap.servers": "b:1"}),
        **overrides,
    )
