"""librdkafka's log output, bounded: the one logger every client of Mirrorplane logs through.

A client that cannot reach its brokers logs every failed connection attempt (``FAIL ... Connect to ipv4#...
failed: Connection refused``), each client on its own reconnect backoff: with a few dozen clients that was
thousands of ERROR lines a second, and three closed ports gave a worker about 4,100 lines a minute. Two filters
bound it, both per log line, never per replicated record:

- ``StateChangeFilter`` lets a broker's line through when what it says about that broker changes (a refused
  connection, then a failed handshake, then a different error), not at every retry of every client. A line that
  keeps repeating is let through again once every ``REMINDER_SECONDS``, with the count of its repeats.
- ``RateLimitFilter`` then lets at most a fixed number of lines a second through, and says on the next line it lets
  through how many it suppressed.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

LIBRDKAFKA_LOG = logging.getLogger(__name__)
LINES_PER_SECOND = 10
REMINDER_SECONDS = 300.0
# librdkafka's lines name the thread they come from: a broker's ("[thrd:host:9092/1]: ...") or the client's own.
_THREAD = re.compile(r"^\[thrd:(?P<thread>[^\]]*)\]:\s*")
_NUMBERS = re.compile(r"\d+")
_MAX_KEYS = 10_000


class StateChangeFilter(logging.Filter):
    """A line passes when it says something new about its broker: its text, with numbers and the client's name left
    out ("after 0ms", "rdkafka#consumer-17"), differs from the last line let through for the same broker thread and
    facility, or that line passed ``reminder_seconds`` ago. The line let through after repeats carries their count.
    Thread-safe; keeps at most ``_MAX_KEYS`` brokers (the oldest are forgotten)."""

    def __init__(self, reminder_seconds: float = REMINDER_SECONDS, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.reminder_seconds = reminder_seconds
        self.clock = clock
        self._lock = threading.Lock()
        self._last: dict[tuple[str, str], tuple[str, float, int]] = {}  # key -> (text, passed at, repeats since)

    def filter(self, record: logging.LogRecord) -> bool:
        facility, message = _parts(record)
        match = _THREAD.match(message)
        thread = match.group("thread") if match else ""
        text = _NUMBERS.sub("#", message[match.end() :] if match else message)
        key = (facility, thread)
        now = self.clock()
        with self._lock:
            last = self._last.pop(key, None)
            if last is not None and last[0] == text and now - last[1] < self.reminder_seconds:
                self._last[key] = (last[0], last[1], last[2] + 1)
                return False
            self._last[key] = (text, now, 0)
            while len(self._last) > _MAX_KEYS:
                del self._last[next(iter(self._last))]
        if last is not None and last[2]:
            said = "repeated" if last[0] == text else "the previous line for this broker repeated"
            record.msg = f"{record.getMessage()} [{said} {last[2]} times in {now - last[1]:.0f} s]"
            record.args = ()
        return True


def _parts(record: logging.LogRecord) -> tuple[str, str]:
    """(facility, message) of a librdkafka line, logged by confluent-kafka as ("%s [%s] %s", fac, client, text)."""
    args = record.args
    if isinstance(args, tuple) and len(args) == 3 and record.msg == "%s [%s] %s":
        return str(args[0]), str(args[2])
    return "", record.getMessage()


class RateLimitFilter(logging.Filter):
    """At most ``per_second`` records a second pass (fixed one-second windows, thread-safe: librdkafka's lines
    arrive on whichever thread polls its client); the first record let through after some were dropped carries
    their count."""

    def __init__(self, per_second: int = LINES_PER_SECOND, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.per_second = per_second
        self.clock = clock
        self._lock = threading.Lock()
        self._window = -1
        self._passed = 0
        self._suppressed = 0

    def filter(self, record: logging.LogRecord) -> bool:
        with self._lock:
            window = int(self.clock())
            if window != self._window:
                self._window, self._passed = window, 0
            if self._passed >= self.per_second:
                self._suppressed += 1
                return False
            self._passed += 1
            suppressed, self._suppressed = self._suppressed, 0
        if suppressed:
            record.msg = f"{record.getMessage()} [{suppressed} librdkafka log lines suppressed before this one]"
            record.args = ()
        return True


LIBRDKAFKA_LOG.addFilter(StateChangeFilter())
LIBRDKAFKA_LOG.addFilter(RateLimitFilter())


def logged(config: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a librdkafka client config that logs through LIBRDKAFKA_LOG: every client's config goes through
    this, so none logs on its own (unbounded) or misses the rate limit."""
    return {**config, "logger": LIBRDKAFKA_LOG}
