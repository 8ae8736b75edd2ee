"""A background producer for browser tests: records at a steady rate until stopped."""

from __future__ import annotations

import threading
import time
from types import TracebackType

from confluent_kafka import Producer


class Traffic:
    """Produces ``rate`` records/s to ``topic`` round-robin over ``partitions`` in a thread; ``sent`` counts them."""

    def __init__(self, bootstrap: str, topic: str, partitions: int = 1, rate: int = 100, prefix: str = "rec") -> None:
        self.topic, self.partitions, self.rate, self.prefix = topic, partitions, rate, prefix
        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "enable.idempotence": True})
        self.sent = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name=f"traffic-{topic}")

    def __enter__(self) -> Traffic:
        self._thread.start()
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.stop()

    def stop(self, flush_seconds: float = 30.0) -> int:
        """Stop producing; with the broker gone, pass a short flush so undeliverable records are abandoned."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(30)
        self.producer.flush(flush_seconds)
        return self.sent

    def _run(self) -> None:
        period = 0.05
        per_tick = max(1, int(self.rate * period))
        while not self._stop.is_set():
            for _ in range(per_tick):
                value = f"{self.prefix}-{self.sent:08d}".encode()
                self.producer.produce(self.topic, value, value, self.sent % self.partitions)
                self.sent += 1
            self.producer.poll(0)
            time.sleep(period)
