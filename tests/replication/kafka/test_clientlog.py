"""RateLimitFilter: a fixed number of log lines a second, and a count of the rest on the next line let through."""

from __future__ import annotations

import logging

from replication.kafka.clientlog import RateLimitFilter


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def record(message: str = "FAIL Connect to ipv4#127.0.0.1:1 failed: Connection refused") -> logging.LogRecord:
    return logging.LogRecord("replication.librdkafka", logging.ERROR, __file__, 1, message, None, None)


def test_it_lets_through_a_fixed_number_of_lines_a_second_and_counts_the_rest() -> None:
    clock = Clock()
    limit = RateLimitFilter(per_second=3, clock=clock)
    passed = [limit.filter(record()) for _ in range(100)]
    assert passed.count(True) == 3 and passed[:3] == [True, True, True]
    clock.now += 1.0
    next_line = record()
    assert limit.filter(next_line)
    assert next_line.getMessage().endswith("[97 librdkafka log lines suppressed before this one]")
    assert limit.filter(record()) and not record().getMessage().endswith("suppressed before this one]")


def test_a_quiet_logger_loses_nothing() -> None:
    clock = Clock()
    limit = RateLimitFilter(per_second=3, clock=clock)
    for _ in range(10):
        lines = [record(f"line {n}") for n in range(3)]
        assert all(limit.filter(line) for line in lines)
        assert [line.getMessage() for line in lines] == ["line 0", "line 1", "line 2"]
        clock.now += 1.0
