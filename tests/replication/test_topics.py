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
