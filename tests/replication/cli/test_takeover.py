"""`python -m replication takeover` and `run --take-over-from-mm2`, without Kafka: the takeover is a stand-in."""

from __future__ import annotations

import io

import pytest

from replication.cli import takeover
from replication.config import FlowConfig
from replication.mm2.takeover import PartitionTakeover
from replication.task import takeover as task_takeover
from tests.replication.fakes import flow


def test_each_enabled_flow_is_taken_over_and_each_partition_printed(monkeypatch: pytest.MonkeyPatch) -> None:
    def seeded(config: FlowConfig) -> task_takeover.Takeover:
        part = PartitionTakeover("orders", 0, "us-west.orders", 120, 100, 98)
        return task_takeover.Takeover(config.name, "mm2-offsets.us-west.internal", [part])

    monkeypatch.setattr(task_takeover, "take_over", seeded)
    out, err = io.StringIO(), io.StringIO()
    assert takeover.take_over([flow(), flow(enabled=False)], out, err) == 0
    lines = out.getvalue().splitlines()
    assert lines[0].endswith("1 partitions taken over from MM2 (mm2-offsets.us-west.internal)")
    assert lines[1].startswith("  orders-0 -> us-west.orders: MM2 committed 120, start 100; offset sync 100 -> 98")
    assert len(lines) == 2 and err.getvalue() == ""  # the disabled flow is not taken over


def test_a_flow_whose_mm2_offsets_cannot_be_read_is_named_and_nothing_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(config: FlowConfig) -> task_takeover.Takeover:
        raise task_takeover.TakeoverError("MM2's offsets storage topic mm2-offsets.us-west.internal does not exist")

    monkeypatch.setattr(task_takeover, "take_over", refused)
    err = io.StringIO()
    assert takeover.take_over([flow()], io.StringIO(), err) == 2
    assert "not taken over from MM2: MM2's offsets storage topic mm2-offsets.us-west.internal" in err.getvalue()
