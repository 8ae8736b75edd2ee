"""Seeding the demo on its existing state: a restarted broker that lists no topics yet must not abort the demo."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException

from controlplane.demo import demo_data
from controlplane.flows.models import Flow

pytestmark = pytest.mark.django_db
BOOTSTRAPS = {"us-west": "127.0.0.1:1", "us-east": "127.0.0.1:2", "backup": "127.0.0.1:3"}


class _Metadata:
    topics: dict[str, Any] = {}


def _admin_answering(code: int) -> type:
    class FakeAdmin:
        created: list[str] = []

        def __init__(self, config: dict[str, str]) -> None:
            pass

        def list_topics(self, timeout: float) -> _Metadata:
            return _Metadata()  # still loading its logs: no topics listed

        def create_topics(self, topics: list[Any]) -> dict[str, Future[None]]:
            futures = {}
            for topic in topics:
                future: Future[None] = Future()
                future.set_exception(KafkaException(KafkaError(code)))
                futures[topic.topic] = future
                FakeAdmin.created.append(topic.topic)
            return futures

    return FakeAdmin


def test_topics_that_already_exist_are_seeded(monkeypatch: pytest.MonkeyPatch) -> None:
    admin = _admin_answering(KafkaError.TOPIC_ALREADY_EXISTS)
    monkeypatch.setattr(demo_data, "AdminClient", admin)
    assert demo_data.seed(BOOTSTRAPS) == ["us-west->us-east", "us-east->backup"]
    assert sorted(admin.created) == ["orders", "payments"]  # type: ignore[attr-defined]
    assert demo_data.seed(BOOTSTRAPS) == []  # idempotent: a second start adds nothing
    assert Flow.objects.count() == 2


def test_any_other_topic_error_still_stops_the_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(demo_data, "AdminClient", _admin_answering(KafkaError.POLICY_VIOLATION))
    with pytest.raises(KafkaException):
        demo_data.seed(BOOTSTRAPS)
