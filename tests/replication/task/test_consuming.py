"""At least once, the task takes what the consumer has and never waits for a batch to fill. Exactly once, an idle
task waits for a first record, then lets a batch collect briefly."""

from __future__ import annotations

from typing import Any

from replication.task.replicationtask import consume_available, consume_collecting


class RecordingConsumer:
    """Hands out queued records; records which (count, timeout) calls were made."""

    def __init__(self, queued: int, arriving: int = 0) -> None:
        self.queued = queued
        self.arriving = arriving  # records that turn up while a call blocks
        self.calls: list[tuple[int, float]] = []

    def consume(self, num_messages: int, timeout: float) -> list[Any]:
        self.calls.append((num_messages, timeout))
        if self.queued == 0 and timeout > 0:
            self.queued, self.arriving = self.arriving, 0
        taken = min(num_messages, self.queued)
        self.queued -= taken
        return [object()] * taken


def test_queued_records_are_returned_without_waiting() -> None:
    consumer = RecordingConsumer(queued=37)
    assert len(consume_available(consumer, 10000, 0.025)) == 37  # type: ignore[arg-type]
    assert consumer.calls == [(10000, 0)]


def test_a_full_queue_gives_one_full_batch() -> None:
    consumer = RecordingConsumer(queued=25000)
    assert len(consume_available(consumer, 10000, 0.025)) == 10000  # type: ignore[arg-type]
    assert consumer.calls == [(10000, 0)]


def test_an_empty_queue_waits_for_the_first_record_only_and_takes_what_came_with_it() -> None:
    consumer = RecordingConsumer(queued=0, arriving=5)
    assert len(consume_available(consumer, 10000, 0.025)) == 5  # type: ignore[arg-type]
    assert consumer.calls == [(10000, 0), (1, 0.025), (9999, 0)]


def test_nothing_arriving_returns_empty_after_one_wait() -> None:
    consumer = RecordingConsumer(queued=0)
    assert consume_available(consumer, 10000, 0.025) == []  # type: ignore[arg-type]
    assert consumer.calls == [(10000, 0), (1, 0.025)]


class WaveConsumer(RecordingConsumer):
    """Each call sees the next wave of records arrive while it blocks."""

    def __init__(self, waves: list[int]) -> None:
        super().__init__(queued=0)
        self.waves = waves

    def consume(self, num_messages: int, timeout: float) -> list[Any]:
        self.calls.append((num_messages, timeout))
        return [object()] * min(num_messages, self.waves.pop(0) if self.waves else 0)


def test_exactly_once_an_idle_task_waits_for_the_first_record_then_collects_briefly() -> None:
    consumer = WaveConsumer([1, 40])
    assert len(consume_collecting(consumer, 10000, 0.25, 0.005)) == 41  # type: ignore[arg-type]
    assert consumer.calls == [(1, 0.25), (9999, 0.005)]


def test_exactly_once_nothing_arriving_returns_empty_after_one_long_wait() -> None:
    consumer = WaveConsumer([])
    assert consume_collecting(consumer, 10000, 0.25, 0.005) == []  # type: ignore[arg-type]
    assert consumer.calls == [(1, 0.25)]
