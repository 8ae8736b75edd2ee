"""A steady trickle of records for demos: `python -m replication.localkafka.traffic --bootstrap B --topic T`."""

from __future__ import annotations

import argparse
import json
import random
import signal
import sys
import time
from collections.abc import Sequence

from confluent_kafka import Producer


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m replication.localkafka.traffic", description=__doc__)
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--topic", action="append", required=True, help="repeat for several topics")
    parser.add_argument("--rate", type=float, default=50.0, help="records per second per topic (default 50)")
    return parser


def _record(topic: str, seq: int) -> tuple[bytes, bytes]:
    body = {"topic": topic, "seq": seq, "amount": round(random.uniform(1, 500), 2), "ts": time.time()}
    return f"{topic}-{seq % 97}".encode(), json.dumps(body).encode()


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    running = True

    def stop(*_: object) -> None:
        nonlocal running
        running = False

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    producer = Producer({"bootstrap.servers": args.bootstrap, "enable.idempotence": True, "linger.ms": 20})
    seq, interval = 0, 1.0 / args.rate
    while running:
        for topic in args.topic:
            key, value = _record(topic, seq)
            producer.produce(topic, value, key, headers=[("source", b"demo-traffic")])
        seq += 1
        producer.poll(0)
        time.sleep(interval)  # pacing of a rate-limited generator
    producer.flush(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
