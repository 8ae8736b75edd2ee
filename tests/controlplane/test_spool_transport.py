"""The demo's Celery broker under a producer and a consumer at once: every message arrives whole.

kombu's own filesystem transport let a consumer read a message file between its creation and its write; the worker
died on the empty JSON ("Unrecoverable error: JSONDecodeError") in a make demo run.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from kombu import Connection

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
        with connection(folder, transport) as conn:
            queue = conn.SimpleQueue("race")
            for n in range(MESSAGES):
                queue.put({"n": n, "pad": "x" * 200_000})
        sent.set()

    def take() -> None:
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


def test_the_demo_settings_use_it_for_the_filesystem_broker(settings: Any) -> None:
    from controlplane.celery import app

    if not settings.CELERY_BROKER_URL.startswith("filesystem://"):
        assert app.conf.broker_transport is None  # Redis and others: kombu's own transports
        return
    assert app.conf.broker_transport == SPOOL
