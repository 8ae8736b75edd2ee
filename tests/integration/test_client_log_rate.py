"""librdkafka clients of an unreachable broker (a closed port: every connection refused) log through Mirrorplane's
logger a line per change of what fails, whatever the number of clients and retries; the same clients on a plain
logger log a line per retry."""

from __future__ import annotations

import logging
import re
import socket
import time

from confluent_kafka import Consumer

from replication.clientlog import LIBRDKAFKA_LOG

CLIENTS = 20
PERIOD_SECONDS = 10.0


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


def test_an_unreachable_broker_yields_a_line_per_state_not_per_retry() -> None:
    bootstrap = f"127.0.0.1:{closed_port()}"
    raw = logging.getLogger("tests.librdkafka.raw")
    raw.propagate = False
    limited, unlimited = Counter(), Counter()
    LIBRDKAFKA_LOG.addHandler(limited)
    raw.addHandler(unlimited)
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
    states = {re.match(r"(\S+) \[[^]]*\] (\[thrd:[^]]*\])", r.getMessage()).groups() for r in limited.records}
    print(
        f"{PERIOD_SECONDS:.0f} s, {CLIENTS} clients each: {len(unlimited.records)} lines unlimited, "
        f"{len(limited.records)} through {LIBRDKAFKA_LOG.name}: {sorted(states)}"
    )
    # one line per facility and broker thread (the bootstrap broker's FAIL; at most a client-wide line beside it),
    # while the same clients on a plain logger log every retry of every client
    assert 1 <= len(limited.records) == len(states) <= 3
    assert len(unlimited.records) >= CLIENTS * 2
