"""A bare exactly-once loop, as a latency floor for exactly once: how close can transactions come to MirrorMaker?

Like bench.bareloop, it tracks no positions, so it is a ceiling, not a replicator. Each transaction takes what
the consumer (read_committed) collected, produces it, flushes it and commits it.

- `--producers 1`: one transactional producer, begin, produce, commit, again: the engine's design with nothing
  else in the loop.
- `--producers 2`: two transactional producers take turns, and a transaction's commit (EndTxn, after its records
  were flushed) runs in a thread while the next transaction's records are consumed, produced and flushed. The
  next commit waits for the one before: a transaction that failed would make the one after it fail too (the loop
  stops with an error), so no later record becomes visible without the earlier ones. Flushing before the commit
  keeps each partition's records in source order across the two producers.

Run by bench as `python -m bench.eosloop --source ... --target ... --topic ... --remote ...`; SIGTERM stops it.
"""

from __future__ import annotations

import argparse
import uuid
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from confluent_kafka import Consumer, Producer, TopicPartition

from bench.bareloop import copy_batch, source_consumer, stop_flag

COLLECT_S = 0.005  # what arrives within 5 ms of the first record joins its transaction, as in the engine


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench.eosloop", description=__doc__)
    for name in ("--source", "--target", "--topic", "--remote"):
        parser.add_argument(name, required=True)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--producers", type=int, choices=(1, 2), default=2)
    return parser


def _producer(target: str, transactional_id: str) -> Producer:
    producer = Producer(
        {
            "bootstrap.servers": target,
            "transactional.id": transactional_id,
            "acks": "all",
            "enable.idempotence": True,
            "linger.ms": 1,
            "batch.num.messages": 10000,
        }
    )
    producer.init_transactions(60)
    return producer


def _collect(consumer: Consumer) -> list[Any]:
    msgs: list[Any] = consumer.consume(1, 0.25)
    if msgs:
        msgs += consumer.consume(9999, COLLECT_S)
    return [msg for msg in msgs if msg.error() is None]


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    stopping = stop_flag()
    consumer = source_consumer(args.source, "bench-eosloop", **{"isolation.level": "read_committed"})
    run = uuid.uuid4().hex[:8]
    producers = [_producer(args.target, f"bench-eosloop-{run}-{n}") for n in range(args.producers)]
    consumer.assign([TopicPartition(args.topic, p, 0) for p in range(args.partitions)])
    turn = 0
    committing: Future[None] | None = None
    with ThreadPoolExecutor(max_workers=1) as pool:
        while not stopping():
            msgs = _collect(consumer)
            if not msgs:
                continue
            producer = producers[turn]
            producer.begin_transaction()
            copy_batch(producer, args.remote, msgs)
            if args.producers == 1:
                producer.commit_transaction(60)
                continue
            producer.flush(60)  # in the log before the next transaction's records, on the other producer
            if committing is not None:
                committing.result()  # the transaction before commits first; its failure stops the loop
            committing = pool.submit(producer.commit_transaction, 60)
            turn = 1 - turn
        if committing is not None:
            committing.result()
    consumer.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
