"""librdkafka's log output, bounded: the one logger every client of Mirrorplane logs through, rate-limited.

A client that cannot reach its brokers logs every failed connection attempt (``FAIL ... Connect to ipv4#...
failed: Connection refused``), each client on its own reconnect backoff: with a few dozen clients that was
thousands of ERROR lines a second. ``RateLimitFilter`` lets a fixed number of lines a second through and says, on
the next line it lets through, how many it suppressed. It runs per log line, never per replicated record.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

LIBRDKAFKA_LOG = logging.getLogger("replication.librdkafka")
LINES_PER_SECOND = 10


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


LIBRDKAFKA_LOG.addFilter(RateLimitFilter())


def logged(config: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of a librdkafka client config that logs through LIBRDKAFKA_LOG: every client's config goes through
    this, so none logs on its own (unbounded) or misses the rate limit."""
    return {**config, "logger": LIBRDKAFKA_LOG}
