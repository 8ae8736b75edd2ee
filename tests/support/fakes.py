"""Fakes of the internal-topic clients, for unit tests of replication/ without Kafka."""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from replication.config import ClusterConfig
from replication.mm2.records import OffsetSync
from replication.offsets.syncs import EPOCH_HEADER, EPOCH_START
from replication.offsets.syncstore import OffsetSyncStore


@dataclass
class Produced:
    topic: str
    value: bytes | None
    key: bytes | None
    partition: int
    headers: list[tuple[str, bytes]] | None


@dataclass
class FakeProducer:
    """Records what is produced. `fail_next` makes the next record fail like a gapless producer's: fatally, with
    every record after it, until the producer is rebuilt; `full` makes produce raise BufferError."""

    records: list[Produced] = field(default_factory=list)
    flushed: int = 0
    fail_next: bool = False
    full: bool = False
    broken: bool = False
    error_cb: Any = None
    _reports: list[tuple[Any, Any]] = field(default_factory=list)

    def produce(
        self,
        topic: str,
        value: bytes | None = None,
        key: bytes | None = None,
        partition: int = -1,
        on_delivery: Any = None,
        headers: Any = None,
        **_: Any,
    ) -> None:
        if self.full:
            raise BufferError("Local: Queue full")
        if self.fail_next or self.broken:
            if not self.broken and self.error_cb is not None:
                self.error_cb(SimpleNamespace(fatal=lambda: True, str=lambda: "gap: message timed out"))
            self.fail_next, self.broken = False, True
            self._reports.append((on_delivery, SimpleNamespace(str=lambda: "Local: Fatal error")))
            return
        self.records.append(Produced(topic, value, key, partition, headers))

    def poll(self, timeout: float = 0) -> int:
        reports, self._reports = self._reports, []
        for callback, error in reports:
            if callback is not None:
                callback(error, None)
        return len(reports)

    def flush(self, timeout: float = 0) -> int:
        self.flushed += 1
        return 0

    def __len__(self) -> int:
        """Messages queued: like a real producer's, 0 (falsy) once delivered."""
        return 0


class FakeAdmin:
    def __init__(self) -> None:
        self.created: list[str] = []

    def __len__(self) -> int:
        """Requests queued: like a real admin client's, 0 (falsy) when none is outstanding."""
        return 0

    def list_topics(self, timeout: float = 0) -> Any:
        return SimpleNamespace(brokers={1: None}, topics={})

    def create_topics(self, topics: list[Any]) -> dict[str, Future[None]]:
        result: dict[str, Future[None]] = {}
        for new in topics:
            self.created.append(new.topic)
            future: Future[None] = Future()
            future.set_result(None)
            result[new.topic] = future
        return result


class FakeClients:
    """ClientFactory fakes that record what is produced; one producer and admin per cluster alias."""

    def __init__(self) -> None:
        self.producers: dict[str, FakeProducer] = {}
        self.admins: dict[str, FakeAdmin] = {}
        self.producers_made = 0  # how often a producer was asked for

    def producer(self, cluster: ClusterConfig, error_cb: Any = None) -> FakeProducer:
        """One producer per cluster, so tests read everything it wrote; asking again rebuilds a broken one."""
        self.producers_made += 1
        producer = self.producers.setdefault(cluster.alias, FakeProducer())
        producer.broken, producer.error_cb = False, error_cb
        return producer

    def admin(self, cluster: ClusterConfig) -> FakeAdmin:
        return self.admins.setdefault(cluster.alias, FakeAdmin())

    def consumer(self, cluster: ClusterConfig, purpose: str) -> Any:
        raise NotImplementedError


def syncs_of(producer: FakeProducer) -> list[tuple[str, int, int, int, bool]]:
    """(topic, partition, upstream, downstream, epoch start) of every offset sync produced, in order."""
    result = []
    for record in producer.records:
        sync = OffsetSync.from_bytes(record.key, record.value)
        start = (EPOCH_HEADER, EPOCH_START) in (record.headers or [])
        result.append((sync.topic, sync.partition, sync.upstream_offset, sync.downstream_offset, start))
    return result


def store_of(producer: FakeProducer) -> OffsetSyncStore:
    store = OffsetSyncStore()
    for topic, partition, upstream, downstream, start in syncs_of(producer):
        store.add(OffsetSync(topic, partition, upstream, downstream), epoch_start=start)
    return store
