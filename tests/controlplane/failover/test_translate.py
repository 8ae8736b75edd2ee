"""The order of failover steps, and apply's refusal to move offsets backwards (translating a position back to its
origin is replication/'s, tested in tests/replication/test_translation.py)."""

from __future__ import annotations

import pytest

from controlplane.failover.models import Failover
from controlplane.failover.services import kafka, offsets
from controlplane.failover.services.machine import next_step


def test_an_unplanned_failover_skips_the_drain() -> None:
    assert next_step(Failover(mode="unplanned"), "preflight") == "fence"
    assert next_step(Failover(mode="planned"), "preflight") == "drain"
    assert next_step(Failover(mode="planned"), "verify") == "failback"


def test_apply_names_every_offset_that_would_move_backwards(monkeypatch: pytest.MonkeyPatch) -> None:
    committed = {("us-west.orders", 0): 50, ("us-west.orders", 1): 5}
    monkeypatch.setattr(kafka, "committed", lambda client, group: committed)
    wanted = {"billing": {("us-west.orders", 0): 40, ("us-west.orders", 1): 9, ("us-west.orders", 2): 1}}
    assert offsets._backwards(None, wanted) == ["billing us-west.orders-0: 50 -> 40"]
