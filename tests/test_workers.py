"""tests/support/workers.py: pytest-xdist workers get ports, Redis databases and state directories of their own."""

from __future__ import annotations

import pytest

from tests.support import workers


def test_without_xdist_nothing_moves(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    assert workers.worker_index() == 0
    assert workers.port(29092) == 29092
    assert workers.redis_db(14) == 14
    assert workers.state_name("test-kafka") == "test-kafka"
    assert workers.redis_url("redis://127.0.0.1:6379/15") == "redis://127.0.0.1:6379/15"


def test_a_second_worker_moves_ports_databases_and_state(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    assert workers.port(29092) == 29392
    assert workers.redis_db(14) == 12
    assert workers.state_name("test-kafka") == "test-kafka-gw1"
    assert workers.redis_url("redis://:secret@127.0.0.1:6379/15") == "redis://:secret@127.0.0.1:6379/13"
    assert workers.redis_url("filesystem://localhost/") == "filesystem://localhost/"


def test_no_redis_database_below_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw3")
    with pytest.raises(RuntimeError, match="no Redis database left"):
        workers.redis_db(5)
