"""Fixed-rate load for latency runs: `rate` records per second for `seconds`, each stamped (CreateTime) as produced.

Run by bench as `python -m bench.loadgen ...` in its own process; prints {"produced": n, "seconds": s} at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Sequence

from confluent_kafka import Producer

TICK = 0.005  # seconds: 100 records per tick at 20k/s, so the load is smooth at the scale latency is measured


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.loadgen", description=__doc__)
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--rate", type=int, required=True, help="records per second")
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=8)
    return parser


def run(producer: Producer, topic: str, rate: int, seconds: float, size: int, partitions: int) -> int:
    value = os.urandom(size)
    produce = producer.produce
    start = time.monotonic()
    end, sent = start + seconds, 0
    while (now := time.monotonic()) < end:
        due = int((now - start) * rate)
        while sent < due:
            # No timestamp given: librdkafka stamps CreateTime at this call, which is where latency starts.
            produce(topic, value, b"k%d" % sent, sent % partitions)
            sent += 1
        producer.poll(0)
        time.sleep(TICK)  # the next tick catches up on whatever the sleep overran
    return sent


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    producer = Producer({"bootstrap.servers": args.bootstrap, "acks": "all", "linger.ms": 1})
    started = time.monotonic()
    sent = run(producer, args.topic, args.rate, args.seconds, args.size, args.partitions)
    unsent = producer.flush(30)
    print(json.dumps({"produced": sent - unsent, "seconds": round(time.monotonic() - started, 3)}), flush=True)
    return 0 if unsent == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
