"""The demo's Celery broker under a producer and a consumer at once: every message arrives whole.

kombu's own filesystem transport let a consumer read a message file between its creation and its write; the worker
died on the empty JSON ("Unrecoverable error: JSONDecodeError") in a make demo run. Its table of bound queues lost
bindings to processes declaring at once, and messages published by a thread that declared a queue while another
thread of its process was binding it went to the dead-letter queue (CI saw the first 14 of 400 vanish).
"""

from __future__ import annotations

import threading
import uuid
from pathlib import Path
from typing import Any

import pytest
from kombu import Connection, Exchange, Queue

SPOOL = "controlplane.core.spool:Transport"
MESSAGES = 400


def connection(folder: Path, transport: str) -> Connection:
    # kombu keeps the exchange's bindings in its control folder (./control by default) and caches them for the
    # process: one folder beside the tests' own, shared as the cache is.
    control = folder.parent / "spool-control"
    control.mkdir(exist_ok=True)
    options = {
        "data_folder_in": str(folder),
        "data_folder_out": str(folder),
        "processed_folder": str(folder),
        "control_folder": str(control),
    }
    return Connection("filesystem://localhost/", transport=transport, transport_options=options)


def race(folder: Path, transport: str) -> tuple[list[Any], list[BaseException]]:
    """One thread sends MESSAGES bodies of 200 KB while another takes them as they appear."""
    received: list[Any] = []
    errors: list[BaseException] = []
    sent = threading.Event()

    def send() -> None:
        try:
            _send()
        except BaseException as exc:  # a thread's exception is otherwise only printed
            errors.append(exc)
            sent.set()

    def _send() -> None:
        with connection(folder, transport) as conn:
            queue = conn.SimpleQueue("race")
            for n in range(MESSAGES):
                queue.put({"n": n, "pad": "x" * 200_000})
        sent.set()

    def take() -> None:
        try:
            _take()
        except BaseException as exc:
            errors.append(exc)

    def _take() -> None:
        with connection(folder, transport) as conn:
            queue = conn.SimpleQueue("race")
            while len(received) < MESSAGES:
                try:
                    message = queue.get(timeout=0.01 if not sent.is_set() else 2)
                except queue.Empty:
                    if sent.is_set():
                        return
                    continue
                except Exception as exc:  # the JSONDecodeError the worker died of
                    errors.append(exc)
                    continue
                received.append(message.payload)
                message.ack()

    threads = [threading.Thread(target=send), threading.Thread(target=take)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return received, errors


def test_every_message_arrives_whole_while_being_written(tmp_path: Path) -> None:
    received, errors = race(tmp_path, SPOOL)
    assert errors == []
    assert [m["n"] for m in received] == list(range(MESSAGES))
    assert all(len(m["pad"]) == 200_000 for m in received)
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".partial")]


def test_messages_sent_at_the_same_clock_reading_arrive_in_order(tmp_path: Path, monkeypatch: Any) -> None:
    """A fast sender puts several messages within one clock tick (CI saw 4 arrive before 3)."""
    monkeypatch.setattr("controlplane.core.spool.monotonic_ns", lambda: 1_000_000)
    received, errors = race(tmp_path, SPOOL)
    assert errors == []
    assert [m["n"] for m in received] == list(range(MESSAGES))


BINDERS = 6
ROUNDS = 15


def bind_at_once(folder: Path, transport: str) -> tuple[list[list[str]], list[BaseException]]:
    """BINDERS connections declare their own queue on one new exchange at the same moment, ROUNDS times.

    The web process, the worker and beat declare their queues as they start, as these threads do here.
    """
    errors: list[BaseException] = []
    tables: list[list[str]] = []
    for _ in range(ROUNDS):
        exchange = Exchange(f"bind-{uuid.uuid4().hex}", type="direct")
        names = [f"{exchange.name}-q{n}" for n in range(BINDERS)]
        start = threading.Barrier(BINDERS)

        def bind(name: str, exchange: Exchange = exchange, start: threading.Barrier = start) -> None:
            try:
                with connection(folder, transport) as conn:
                    channel = conn.channel()
                    start.wait(timeout=30)
                    Queue(name, exchange, routing_key=name)(channel).declare()
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=bind, args=(name,)) for name in names]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        try:
            with connection(folder, transport) as conn:
                tables.append(sorted(row.queue for row in conn.default_channel.get_table(exchange.name)))
        except ValueError as exc:  # a table left unreadable
            errors.append(exc)
    return tables, errors


def test_queues_declared_at_once_are_all_bound(tmp_path: Path) -> None:
    tables, errors = bind_at_once(tmp_path, SPOOL)
    assert errors == []
    assert all(len(table) == BINDERS for table in tables), tables
    assert not [p.name for p in (tmp_path.parent / "spool-control").iterdir() if p.name.endswith(".partial")]


@pytest.mark.parametrize("transport", ["filesystem"])
def test_kombus_own_transport_loses_or_breaks_bindings_declared_at_once(tmp_path: Path, transport: str) -> None:
    """The race the spool transport closes, shown on kombu's own, so the test above can fail."""
    tables, errors = bind_at_once(tmp_path, transport)
    assert errors or any(len(table) < BINDERS for table in tables)


def publish_as_declared(folder: Path, transport: str) -> tuple[list[int], list[BaseException]]:
    """BINDERS threads each declare the same new queue and at once publish one message to it, ROUNDS times; every
    message of every round is then taken back. Returns how many came back per round."""
    errors: list[BaseException] = []
    counts: list[int] = []
    for _ in range(ROUNDS):
        name = f"first-{uuid.uuid4().hex}"
        start = threading.Barrier(BINDERS)

        def declare_and_publish(n: int, name: str = name, start: threading.Barrier = start) -> None:
            try:
                with connection(folder, transport) as conn:
                    conn.connect()
                    start.wait(timeout=30)
                    conn.SimpleQueue(name, no_ack=True).put({"n": n})  # declares, then publishes
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=declare_and_publish, args=(n,)) for n in range(BINDERS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        with connection(folder, transport) as conn:
            queue = conn.SimpleQueue(name, no_ack=True)
            taken = 0
            while True:
                try:
                    queue.get(timeout=0.5)
                except queue.Empty:
                    break
                taken += 1
            counts.append(taken)
    return counts, errors


def test_messages_published_by_threads_that_declared_the_queue_at_once_all_arrive(tmp_path: Path) -> None:
    counts, errors = publish_as_declared(tmp_path, SPOOL)
    assert errors == []
    assert counts == [BINDERS] * ROUNDS


def test_the_demo_settings_use_it_for_the_filesystem_broker(settings: Any) -> None:
    from controlplane.celery import app

    if not settings.CELERY_BROKER_URL.startswith("filesystem://"):
        assert app.conf.broker_transport is None  # Redis and others: kombu's own transports
        return
    assert app.conf.broker_transport == SPOOL
