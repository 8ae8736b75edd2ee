"""Fakes of confluent-kafka's Message, Producer and the admin client's consumer-group calls for unit tests (no
broker)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from confluent_kafka import ConsumerGroupState, ConsumerGroupTopicPartitions, KafkaError

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

    def __len__(self) -> int:
        """Records not yet delivered, as librdkafka counts what waits for a delivery report."""
        return len(self.produced)


class FakeClients:
    def __init__(self) -> None:
        self.producer_instance = FakeProducer()

    def task_producer(self, flow: FlowConfig, task_id: int, error_cb: Any = None) -> FakeProducer:
        return self.producer_instance


@dataclass
class FakeGroupAdmin:
    """The consumer-group calls of an AdminClient over groups held in memory. As a broker does, it describes an
    unknown group as DEAD, and refuses an offset write into a group with members, partition by partition."""

    states: dict[str, ConsumerGroupState] = field(default_factory=dict)
    members: dict[str, list[str]] = field(default_factory=dict)  # group -> ["client@host", ...]
    offsets: dict[str, dict[tuple[str, int], int]] = field(default_factory=dict)  # group -> committed offsets
    timeouts: list[float] = field(default_factory=list)  # the request_timeout of every call

    def describe_consumer_groups(self, groups: list[str], request_timeout: float) -> dict[str, Future[Any]]:
        self.timeouts.append(request_timeout)
        return {g: _done(SimpleNamespace(state=self._state(g), members=self._members(g))) for g in groups}

    def list_consumer_group_offsets(
        self, request: list[ConsumerGroupTopicPartitions], request_timeout: float
    ) -> dict[str, Future[Any]]:
        self.timeouts.append(request_timeout)
        group = request[0].group_id
        listed = [_tp(t, p, o) for (t, p), o in sorted(self.offsets.get(group, {}).items())]
        return {group: _done(SimpleNamespace(topic_partitions=[*listed, _tp("never-committed", 0, -1001)]))}

    def alter_consumer_group_offsets(
        self, request: list[ConsumerGroupTopicPartitions], request_timeout: float
    ) -> dict[str, Future[Any]]:
        self.timeouts.append(request_timeout)
        group, written = request[0].group_id, []
        for tp in request[0].topic_partitions:
            error = KafkaError(KafkaError.UNKNOWN_MEMBER_ID) if self.members.get(group) else None
            if error is None:
                self.offsets.setdefault(group, {})[(tp.topic, tp.partition)] = tp.offset
            written.append(_tp(tp.topic, tp.partition, tp.offset, error))
        return {group: _done(SimpleNamespace(topic_partitions=written))}

    def _state(self, group: str) -> ConsumerGroupState:
        return self.states.get(group, ConsumerGroupState.DEAD)

    def _members(self, group: str) -> list[SimpleNamespace]:
        return [SimpleNamespace(client_id=m.split("@")[0], host=m.split("@")[1]) for m in self.members.get(group, [])]


def _done(result: Any) -> Future[Any]:
    future: Future[Any] = Future()
    future.set_result(result)
    return future


def _tp(topic: str, partition: int, offset: int, error: KafkaError | None = None) -> SimpleNamespace:
    return SimpleNamespace(topic=topic, partition=partition, offset=offset, error=error)


def flow(**overrides: Any) -> FlowConfig:
    return FlowConfig(
        ClusterConfig("us-west", {"bootstrap.servers": "a:1"}),
        ClusterConfig("us-east", {"bootstrap.servers": "b:1"}),
        **overrides,
    )


@dataclass
class FakeReader:
    """The consuming part of a Consumer over logs held in memory: `logs[(topic, partition)]` lists its records
    (offsets may have gaps) and `ends` its end offsets (after the last record unless given). Like librdkafka with
    enable.partition.eof, it reports the end of an assigned partition once, when reaching it."""

    logs: dict[tuple[str, int], list[FakeMessage]] = field(default_factory=dict)
    ends: dict[tuple[str, int], int] = field(default_factory=dict)
    silent: bool = False  # returns nothing at all, as an unreachable cluster would
    limit: int = 1_000_000  # at most this many records per consume() call (a slow cluster)
    positions: dict[tuple[str, int], int] = field(default_factory=dict)
    paused: set[tuple[str, int]] = field(default_factory=set)
    eof_sent: set[tuple[str, int]] = field(default_factory=set)

    def assign(self, partitions: list[Any]) -> None:
        self.positions = {(tp.topic, tp.partition): tp.offset for tp in partitions}

    def pause(self, partitions: list[Any]) -> None:
        self.paused |= {(tp.topic, tp.partition) for tp in partitions}

    def resume(self, partitions: list[Any]) -> None:
        self.paused -= {(tp.topic, tp.partition) for tp in partitions}

    def end(self, key: tuple[str, int]) -> int:
        records = self.logs.get(key, [])
        return self.ends.get(key, records[-1].offset() + 1 if records else 0)

    def consume(self, num_messages: int = 1, timeout: float = -1) -> list[FakeMessage]:
        out: list[FakeMessage] = []
        num_messages = min(num_messages, self.limit)
        for key, position in list(self.positions.items()):
            if self.silent or key in self.paused:
                continue
            records = [m for m in self.logs.get(key, []) if m.offset() >= position][: max(num_messages - len(out), 0)]
            out += records
            if records:
                self.positions[key] = records[-1].offset() + 1
                self.eof_sent.discard(key)
            elif key not in self.eof_sent and len(out) < num_messages:  # nothing left: the partition's end
                eof = KafkaError(KafkaError._PARTITION_EOF)
                out.append(FakeMessage(key[0], key[1], self.end(key), None, None, _error=eof))
                self.eof_sent.add(key)
        return out
