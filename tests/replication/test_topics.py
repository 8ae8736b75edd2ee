"""TopicSync decisions that need no broker: which source topics a flow replicates."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from replication.topics import MAX_TOPIC_NAME, TopicSync
from tests.replication.fakes import flow


@dataclass
class _Topic:
    partitions: dict[int, Any]
    error: Any = None


@dataclass
class _Metadata:
    topics: dict[str, _Topic] = field(default_factory=dict)
    brokers: dict[int, Any] = field(default_factory=lambda: {0: object()})


class _Admin:
    def __init__(self, topics: dict[str, int]) -> None:
        self.metadata = _Metadata({name: _Topic(dict.fromkeys(range(n))) for name, n in topics.items()})

    def list_topics(self, timeout: float = 0) -> _Metadata:
        return self.metadata


def test_a_topic_whose_remote_name_would_exceed_kafkas_limit_is_skipped_not_fatal() -> None:
    long_name = "x" * (MAX_TOPIC_NAME - 3)  # "us-west." makes it too long
    admin = _Admin({"orders": 3, long_name: 1, "__consumer_offsets": 8})
    sync = TopicSync(flow(), admin, admin)  # type: ignore[arg-type]
    assert sync.source_topics() == {"orders": 3}


class _CountingAdmin(_Admin):
    def __init__(self, topics: dict[str, int]) -> None:
        super().__init__(topics)
        self.timeouts: list[float] = []

    def list_topics(self, timeout: float = 0) -> _Metadata:
        self.timeouts.append(timeout)
        return self.metadata


def test_building_a_topic_sync_asks_no_cluster_and_a_listing_takes_the_callers_timeout() -> None:
    source, target = _CountingAdmin({"orders": 3}), _CountingAdmin({})
    sync = TopicSync(flow(), source, target)  # type: ignore[arg-type]
    assert (source.timeouts, target.timeouts) == ([], [])
    assert sync.source_topics(timeout=5.0) == {"orders": 3}
    assert (source.timeouts, target.timeouts) == ([5.0], [])
    assert sync.replication_factor == 1  # the target's one broker, asked once when first needed
    assert sync.replication_factor == 1
    assert len(target.timeouts) == 1
