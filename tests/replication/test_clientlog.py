"""The client log's filters: a line per change of a broker's state, and a fixed number of lines a second."""

from __future__ import annotations

import logging

from replication.clientlog import RateLimitFilter, StateChangeFilter


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def record(message: str = "FAIL Connect to ipv4#127.0.0.1:1 failed: Connection refused") -> logging.LogRecord:
    return logging.LogRecord("replication.clientlog", logging.ERROR, __file__, 1, message, None, None)


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


def librdkafka_line(text: str, client: str = "rdkafka#consumer-1", facility: str = "FAIL") -> logging.LogRecord:
    """A line as confluent-kafka logs it: ("%s [%s] %s", facility, client name, text)."""
    return logging.LogRecord(
        "replication.clientlog", logging.ERROR, __file__, 1, "%s [%s] %s", (facility, client, text), None
    )


BOOTSTRAP = "[thrd:127.0.0.1:{port}/bootstrap]: 127.0.0.1:{port}/bootstrap: "
REFUSED = BOOTSTRAP.format(port=1) + "Connect to ipv4#127.0.0.1:1 failed: Connection refused (after {n}ms)"
OTHER_BROKER = BOOTSTRAP.format(port=2) + "Connect to ipv4#127.0.0.1:2 failed: Connection refused (after 0ms)"
HANDSHAKE = BOOTSTRAP.format(port=1) + "SASL authentication error: Authentication failed (after 3ms in state AUTH_REQ)"


def test_a_broker_that_keeps_failing_the_same_way_gives_one_line_for_every_client() -> None:
    clock = Clock()
    changes = StateChangeFilter(reminder_seconds=300, clock=clock)
    passed = [
        changes.filter(librdkafka_line(REFUSED.format(n=n % 3), client=f"rdkafka#consumer-{n % 20}"))
        for n in range(500)
    ]
    assert passed.count(True) == 1 and passed[0]
    assert changes.filter(librdkafka_line(OTHER_BROKER))  # another broker's state is its own


def test_a_change_of_what_fails_passes_at_once_and_says_how_often_the_last_state_repeated() -> None:
    clock = Clock()
    changes = StateChangeFilter(reminder_seconds=300, clock=clock)
    for _ in range(41):
        changes.filter(librdkafka_line(REFUSED.format(n=0)))
    clock.now += 12
    line = librdkafka_line(HANDSHAKE)
    assert changes.filter(line)
    assert line.getMessage().endswith("[the previous line for this broker repeated 40 times in 12 s]")
    assert "SASL authentication error" in line.getMessage()


def test_a_state_that_lasts_is_repeated_once_per_reminder_with_its_count() -> None:
    clock = Clock()
    changes = StateChangeFilter(reminder_seconds=300, clock=clock)
    passed = []
    for _ in range(600):  # a retry a second for ten minutes
        passed.append(changes.filter(line := librdkafka_line(REFUSED.format(n=1))))
        if passed[-1]:
            last = line
        clock.now += 1
    assert passed.count(True) == 2  # at 0 s and at 300 s
    assert last.getMessage().endswith("[repeated 299 times in 300 s]")


def test_lines_that_are_not_librdkafkas_pass_unless_they_repeat() -> None:
    clock = Clock()
    changes = StateChangeFilter(clock=clock)
    assert changes.filter(record("broker down")) and changes.filter(record("broker up"))
    assert not changes.filter(record("broker up"))
