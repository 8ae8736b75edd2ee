from __future__ import annotations

from collections.abc import Iterator

import pytest

from controlplane import celery_app
from controlplane.core.tasks import ping


@pytest.fixture
def eager_tasks() -> Iterator[None]:
    previous = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = previous


def test_the_celery_app_finds_the_ping_task() -> None:
    assert "controlplane.core.tasks.ping" in celery_app.tasks


def test_ping_returns_pong_when_run_eagerly(eager_tasks: None) -> None:
    assert ping.delay().get(timeout=5) == "pong"
