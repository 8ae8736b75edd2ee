"""The task producer's settings: what the bench measured, and the user's overrides on top."""

from __future__ import annotations

from replication.kafka.clients import producer_config
from tests.replication.fakes import flow


def test_at_least_once_lingers_1_ms_and_exactly_once_5() -> None:
    assert producer_config(flow(), 0)["linger.ms"] == 1
    assert producer_config(flow(exactly_once=True), 0)["linger.ms"] == 5


def test_a_producer_override_wins() -> None:
    assert producer_config(flow(producer_overrides={"linger.ms": "20"}), 0)["linger.ms"] == "20"
