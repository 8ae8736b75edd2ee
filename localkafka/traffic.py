"""A steady trickle of records for demos: `python -m localkafka.traffic --bootstrap B --topic T`.

With `--control DIR` it can be paused and resumed while it runs (the failover wizard's fence step asks for the
source producers to stop): anyone writes `DIR/traffic-control.json` ({"paused": true}) through TrafficControl, the
generator checks it about twice a second, flushes what it sent and stops producing, and reports what it is doing
in `DIR/traffic.json` (pid, rate, topics, paused, records produced). The status file goes when the generator exits.

With `--group G` an application reads what it writes: a consumer group G that reads every `--topic` and commits as
it reads, so the failover wizard has a live group to move. Paused means the source's applications stopped, as a
planned failover's fence asks: the group's member leaves (committing what it read) and joins again on resume.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, Producer

CONTROL_FILE = "traffic-control.json"
STATUS_FILE = "traffic.json"
CHECK_SECONDS = 0.5  # how often the generator reads the control file


def demo_control_dir(state_dir: Path | str) -> Path:
    """Where `manage.py demo`'s generator keeps its switch and status, under the control plane's state dir."""
    return Path(state_dir) / "demo-traffic"


class TrafficControl:
    """The pause switch of a traffic generator and its published status, two small JSON files in one directory.

    Files, not signals: the control plane that flips the switch may run as another user or on a restart of the
    web process, and a file outlives both. Writes are atomic (temporary file, then rename).
    """

    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)
        self.control_path = self.directory / CONTROL_FILE
        self.status_path = self.directory / STATUS_FILE

    def request(self, paused: bool) -> None:
        self._write(self.control_path, {"paused": paused, "requested_at": time.time()})

    def requested_paused(self) -> bool:
        return bool(_read(self.control_path).get("paused", False))

    def reset(self) -> None:
        """Forget a previous run's switch and status (a new generator starts producing)."""
        for path in (self.control_path, self.status_path):
            path.unlink(missing_ok=True)

    def publish(self, status: dict[str, Any]) -> None:
        self._write(self.status_path, status)

    def withdraw(self) -> None:
        self.status_path.unlink(missing_ok=True)

    def status(self) -> dict[str, Any] | None:
        """The generator's last published status, or None when none runs (no status, or its process is gone)."""
        status = _read(self.status_path)
        pid = status.get("pid")
        if not isinstance(pid, int) or not _alive(pid):
            return None
        return status

    def _write(self, path: Path, body: dict[str, Any]) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temporary.write_text(json.dumps(body))
        temporary.replace(path)


def _read(path: Path) -> dict[str, Any]:
    try:
        loaded = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    return True


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m localkafka.traffic", description=__doc__)
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--topic", action="append", required=True, help="repeat for several topics")
    parser.add_argument("--rate", type=float, default=50.0, help="records per second per topic (default 50)")
    parser.add_argument("--control", help="directory of the pause switch and the status file (see above)")
    parser.add_argument("--group", help="also read the topics as this consumer group, committing as it reads")
    return parser


def _record(topic: str, seq: int) -> tuple[bytes, bytes]:
    body = {"topic": topic, "seq": seq, "amount": round(random.uniform(1, 500), 2), "ts": time.time()}
    return f"{topic}-{seq % 97}".encode(), json.dumps(body).encode()


class App:
    """A consumer group member reading the generator's topics, as the demo's application on the source: it commits
    what it read every second, and `stop()` leaves the group (committing first) until the next `read()`."""

    def __init__(self, bootstrap: str, group: str, topics: Sequence[str]) -> None:
        self.bootstrap, self.group, self.topics = bootstrap, group, list(topics)
        self.consumer: Consumer | None = None

    def read(self) -> None:
        """What has arrived, without waiting; joins the group first when it is not a member."""
        if self.consumer is None:
            self.consumer = Consumer(
                {
                    "bootstrap.servers": self.bootstrap,
                    "group.id": self.group,
                    "auto.offset.reset": "earliest",
                    "auto.commit.interval.ms": 1000,
                }
            )
            self.consumer.subscribe(self.topics)
        self.consumer.consume(1000, 0)  # auto-commit stores what it returns

    def stop(self) -> None:
        if self.consumer is not None:
            self.consumer.close()  # commits the offsets read, then leaves the group
            self.consumer = None


class Generator:
    """Produces `rate` records per second to each topic, paced by the clock; paused while its control says so.
    Its `app`, when given, reads them back as a consumer group and stops while the generator is paused."""

    def __init__(
        self,
        producer: Producer,
        topics: Sequence[str],
        rate: float,
        control: TrafficControl | None,
        app: App | None = None,
    ) -> None:
        self.producer, self.topics, self.rate, self.control, self.app = producer, list(topics), rate, control, app
        self.seq = 0
        self.paused = False
        self._checked = 0.0

    def step(self) -> bool:
        """Produce one record per topic unless paused; returns whether it produced."""
        self._check()
        if self.app is not None and not self.paused:
            self.app.read()
        if self.paused:
            time.sleep(0.1)
            return False
        for topic in self.topics:
            key, value = _record(topic, self.seq)
            self.producer.produce(topic, value, key, headers=[("source", b"demo-traffic")])
        self.seq += 1
        self.producer.poll(0)
        time.sleep(1.0 / self.rate)  # pacing of a rate-limited generator
        return True

    def _check(self) -> None:
        now = time.monotonic()
        if self.control is None or now - self._checked < CHECK_SECONDS:
            return
        self._checked = now
        paused = self.control.requested_paused()
        if paused and not self.paused:
            self.producer.flush(10)  # paused means nothing more reaches the brokers
            if self.app is not None:
                self.app.stop()  # and the application left its group: reported paused only once it has
        self.paused = paused
        self.publish()

    def publish(self) -> None:
        if self.control is not None:
            self.control.publish(
                {
                    "pid": os.getpid(),
                    "rate": self.rate,
                    "topics": self.topics,
                    "paused": self.paused,
                    "produced": self.seq * len(self.topics),
                    "group": None if self.app is None else self.app.group,
                    "at": time.time(),
                }
            )


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    running = True

    def stop(*_: object) -> None:
        nonlocal running
        running = False

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    producer = Producer({"bootstrap.servers": args.bootstrap, "enable.idempotence": True, "linger.ms": 20})
    control = TrafficControl(args.control) if args.control else None
    app = App(args.bootstrap, args.group, args.topic) if args.group else None
    generator = Generator(producer, args.topic, args.rate, control, app)
    generator.publish()
    try:
        while running:
            generator.step()
    finally:
        if app is not None:
            app.stop()
        producer.flush(10)
        if control is not None:
            control.withdraw()
    return 0


if __name__ == "__main__":
    sys.exit(main())
