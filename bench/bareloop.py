"""The bare loop of the performance baseline: the least a confluent-kafka replicator can do, as a reference.

Manual assignment from offset 0, `consume(10000)`, then `produce` with the same partition, key, headers and
timestamp; acks=all, idempotence, linger.ms=5, batch.num.messages=10000, fetch.queue.backoff.ms=10. No delivery
callbacks and no positions: it tracks nothing, so it is a ceiling, not a replicator.
Run by bench as `python -m bench.bareloop --source ... --target ... --topic ... --remote ...`; SIGTERM stops it.
"""

from __future__ import annotations

import argparse
import signal
import threading
from collections.abc import Callable, Sequence
from typing import Any

from confluent_kafka import Consumer, Producer, TopicPartition


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.bareloop", description=__doc__)
    for name in ("--source", "--target", "--topic", "--remote"):
        parser.add_argument(name, required=True)
    parser.add_argument("--partitions", type=int, default=8)
    return parser


def copy_batch(producer: Producer, remote: str, msgs: list[Any]) -> None:
    produce = producer.produce
    for msg in msgs:
        while True:
            try:
                produce(
                    remote, msg.value(), msg.key(), msg.partition(), timestamp=msg.timestamp()[1], headers=msg.headers()
                )
                break
            except BufferError:
                producer.poll(0.05)
    producer.poll(0)


def stop_flag() -> Callable[[], bool]:
    """Whether SIGTERM came: the loops check it between batches."""
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    return stopping.is_set


def source_consumer(bootstrap: str, group: str, **settings: Any) -> Consumer:
    """The baseline's consumer: no commits, and a 10 ms fetch queue backoff instead of librdkafka's 1000 ms."""
    config = {"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False}
    return Consumer({**config, "fetch.queue.backoff.ms": 10, **settings})


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    stopping = stop_flag()
    consumer = source_consumer(args.source, "bench-bareloop")
    producer = Producer(
        {
            "bootstrap.servers": args.target,
            "acks": "all",
            "enable.idempotence": True,
            "linger.ms": 5,
            "batch.num.messages": 10000,
        }
    )
    consumer.assign([TopicPartition(args.topic, p, 0) for p in range(args.partitions)])
    while not stopping():
        copy_batch(producer, args.remote, consumer.consume(10000, 0.1))
    producer.flush(30)
    consumer.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
