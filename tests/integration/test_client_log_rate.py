"""librdkafka clients of an unreachable broker (a closed port: every connection refused) log through Mirrorplane's
logger at a bounded rate, whatever the number of clients; the same clients on a plain logger log far more."""

from __future__ import annotations

import logging
import math
import re
import socket
import time

from confluent_kafka import Consumer

from replication.kafka.clientlog import LIBRDKAFKA_LOG, LINES_PER_SECOND

CLIENTS = 20
PERIOD_SECONDS = 10.0
SUPPRESSED = re.compile(r"\[(\d+) librdkafka log lines suppressed before this one\]")


class Counter(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def consumers(bootstrap: str, logger: logging.Logger, count: int) -> list[Consumer]:
    config = {"bootstrap.servers": bootstrap, "group.id": "log-rate", "logger": logger}
    return [Consumer({**config, "client.id": f"log-rate-{n}"}) for n in range(count)]


def suppressed_counts(records: list[logging.LogRecord]) -> list[int]:
    """The counts that the lines let through say were suppressed before them."""
    return [int(m.group(1)) for r in records if (m := SUPPRESSED.search(r.getMessage()))]


def test_an_unreachable_broker_yields_a_bounded_number_of_log_lines_a_second() -> None:
    bootstrap = f"127.0.0.1:{closed_port()}"
    raw = logging.getLogger("tests.librdkafka.raw")
    raw.propagate = False
    limited, unlimited = Counter(), Counter()
    LIBRDKAFKA_LOG.addHandler(limited)
    raw.addHandler(unlimited)
    started = time.monotonic()
    clients = consumers(bootstrap, LIBRDKAFKA_LOG, CLIENTS) + consumers(bootstrap, raw, CLIENTS)
    try:
        deadline = time.monotonic() + PERIOD_SECONDS
        while time.monotonic() < deadline:  # polling serves the clients' log lines to their loggers
            for client in clients:
                client.poll(0.005)
    finally:
        for client in clients:
            client.close()
        LIBRDKAFKA_LOG.removeHandler(limited)
        raw.removeHandler(unlimited)
    windows = math.ceil(time.monotonic() - started) + 1  # one-second windows the lines can fall in, closing included
    suppressed = suppressed_counts(limited.records)
    print(
        f"{PERIOD_SECONDS:.0f} s, {CLIENTS} clients each: {len(unlimited.records)} lines unlimited, "
        f"{len(limited.records)} through {LIBRDKAFKA_LOG.name} ({sum(suppressed)} reported suppressed, "
        f"{windows} windows)"
    )
    assert len(limited.records) <= windows * LINES_PER_SECOND
    # the clients offered more than the limit (their first connection failures arrive together), and the lines let
    # through account for what was dropped: the bound above is not met by clients that stayed quiet
    assert suppressed and sum(suppressed) > 0
    assert len(limited.records) + sum(suppressed) > LINES_PER_SECOND
    assert len(unlimited.records) > LINES_PER_SECOND
