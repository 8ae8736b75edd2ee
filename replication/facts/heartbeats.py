"""Heartbeat arrivals: reads every registered cluster's `heartbeats` and `*.heartbeats` topics into the facts lake.

A heartbeat is written to a cluster's own `heartbeats` (as MM2 does: the flow a->b's keyed (a, b) into b, the
reverse pair's keyed (b, a) into a) and travels on only by replication, each hop prefixing the topic. So the topic
name alone gives its path: found in cluster `c`, topic `b.a.heartbeats`, it was written in a and replicated
a -> b -> c; in `c`'s own `heartbeats` it travelled no hop. The key names the flow that emitted it. Its value holds
the emitter's clock; the arrival time is the record's LogAppendTime when the topic stamps one
(`message.timestamp.type=LogAppendTime`, exact) and otherwise the time the collector read it (an upper bound).

    python -m replication.facts.heartbeats --cluster us-west=host:9092 --cluster us-east=host:9093 --lake DIR
"""

from __future__ import annotations

import argparse
import logging
import sys
import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import pyarrow as pa
from confluent_kafka import TIMESTAMP_LOG_APPEND_TIME, Consumer, KafkaError, KafkaException, Message, TopicPartition

from replication.clientlog import logged
from replication.facts.lake import Row, write_rows
from replication.mm2.policy import HEARTBEATS_TOPIC, DefaultReplicationPolicy, is_heartbeats_topic, source_chain
from replication.mm2.records import Heartbeat, RecordFormatError

log = logging.getLogger(__name__)
HEARTBEATS_TABLE = "heartbeats"
HEARTBEATS_SCHEMA = pa.schema(
    [
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("offset", pa.int64()),
        ("source", pa.string()),  # the heartbeat key: the flow that emitted it
        ("target", pa.string()),
        ("path", pa.list_(pa.string())),  # where it was written first, the clusters it was replicated to after
        ("timestamp", pa.int64()),  # the heartbeat's own timestamp (ms, the emitting cluster's clock)
        ("arrival_ms", pa.int64()),
        ("arrival_kind", pa.string()),  # 'log_append' (exact) or 'consumed' (when the collector read it)
    ]
)
GROUP_ID = "mirrorplane-heartbeat-collector"


def arrival_path(policy: DefaultReplicationPolicy, cluster: str, topic: str) -> list[str]:
    """The clusters a heartbeat in `topic` of `cluster` passed through: where it was written, then each hop."""
    return [*reversed(source_chain(policy, topic)), cluster]


class HeartbeatCollector:
    """Reads replicated heartbeat topics (`<alias>.heartbeats`, ...) from where it left off (offsets committed in
    `group_id`) and writes arrival facts. A cluster's own `heartbeats` is not read: its beats have made no hop, and a
    flow's principal may write there without reading (the least-privilege grants).

    `sources`, when given, keeps only the heartbeats of flows between these clusters, keyed with two of them (e.g.
    the registered clusters, when another MirrorMaker deployment shares a cluster).
    """

    def __init__(
        self,
        clusters: Mapping[str, Mapping[str, str]],
        lake: str,
        separator: str = ".",
        group_id: str = GROUP_ID,
        sources: Collection[str] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.clusters = clusters
        self.sources = None if sources is None else frozenset(sources)
        self.lake = lake
        self.policy = DefaultReplicationPolicy(separator)
        self.group_id = group_id
        self.clock = clock
        self._consumers: dict[str, Consumer] = {}
        self._assigned: dict[str, set[tuple[str, int]]] = {}

    def run_once(self, timeout: float = 30.0) -> int:
        """Read every cluster's heartbeat topics to their current end; returns the arrivals written."""
        return sum(self.collect(alias, timeout) for alias in self.clusters)

    def collect(self, alias: str, timeout: float = 30.0) -> int:
        consumer = self._consumer(alias)
        partitions = self._refresh(alias, consumer)
        if not partitions:
            return 0
        rows = self._read_to_end(alias, consumer, partitions, timeout)
        write_rows(self.lake, HEARTBEATS_TABLE, HEARTBEATS_SCHEMA, rows, "arrival_ms", ("cluster", alias))
        if rows:
            consumer.commit(asynchronous=False)  # after the write: at least once, never lost
        log.info("%s: %d heartbeat arrivals from %d partitions", alias, len(rows), len(partitions))
        return len(rows)

    def close(self) -> None:
        for consumer in self._consumers.values():
            consumer.close()
        self._consumers.clear()

    def _consumer(self, alias: str) -> Consumer:
        if alias not in self._consumers:
            config: dict[str, Any] = {
                **self.clusters[alias],
                "group.id": self.group_id,
                "enable.auto.commit": False,
                "enable.partition.eof": True,
                "auto.offset.reset": "earliest",
                "fetch.queue.backoff.ms": 10,
            }
            self._consumers[alias] = Consumer(logged(config))
            self._assigned[alias] = set()
        return self._consumers[alias]

    def _refresh(self, alias: str, consumer: Consumer) -> set[tuple[str, int]]:
        """Assign heartbeat topic partitions that appeared since the last pass (from the committed offsets)."""
        metadata = consumer.list_topics(timeout=10)
        found = {
            (name, p)
            for name, topic in metadata.topics.items()
            # A cluster's own `heartbeats` holds the beats flows wrote into it: no hop, nothing a report counts.
            if topic.error is None and is_heartbeats_topic(self.policy, name) and name != HEARTBEATS_TOPIC
            for p in topic.partitions
        }
        new = found - self._assigned[alias]
        if new:
            consumer.incremental_assign([TopicPartition(t, p) for t, p in sorted(new)])
            self._assigned[alias] |= new
        return self._assigned[alias]

    def _read_to_end(
        self, alias: str, consumer: Consumer, partitions: set[tuple[str, int]], timeout: float
    ) -> list[Row]:
        rows: list[Row] = []
        at_end: set[tuple[str, int]] = set()
        deadline = time.monotonic() + timeout
        while at_end != partitions and time.monotonic() < deadline:
            for msg in consumer.consume(10000, 0.5):
                key = (msg.topic() or "", msg.partition() or 0)
                error = msg.error()
                if error is None:
                    # No discard from at_end: a partition counts as read once it reached its end. Heartbeats keep
                    # arriving every second, so "every partition at its end at once" could take until the deadline.
                    rows.extend(self._arrival(alias, msg))
                elif error.code() == KafkaError._PARTITION_EOF:
                    at_end.add(key)
                else:
                    raise KafkaException(error)
        if at_end != partitions:
            log.warning(
                "%s: %d heartbeat partitions not read to the end in %ss", alias, len(partitions - at_end), timeout
            )
        return rows

    def _arrival(self, alias: str, msg: Message) -> list[Row]:
        topic = msg.topic() or ""
        try:
            heartbeat = Heartbeat.from_bytes(msg.key(), msg.value())
        except RecordFormatError as exc:
            log.warning("%s %s: skipping a record that is not a heartbeat: %s", alias, topic, exc)
            return []
        flow = {heartbeat.source_cluster_alias, heartbeat.target_cluster_alias}
        if self.sources is not None and not flow <= self.sources:
            return []
        kind, ts = msg.timestamp()
        arrival, arrival_kind = (ts, "log_append") if kind == TIMESTAMP_LOG_APPEND_TIME else (self._now(), "consumed")
        path = arrival_path(self.policy, alias, topic)
        return [
            (
                topic,
                msg.partition(),
                msg.offset(),
                heartbeat.source_cluster_alias,
                heartbeat.target_cluster_alias,
                path,
                heartbeat.timestamp,
                arrival,
                arrival_kind,
            )
        ]

    def _now(self) -> int:
        return int(self.clock() * 1000)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m replication.facts.heartbeats", description=__doc__)
    parser.add_argument("--cluster", action="append", required=True, help="alias=bootstrap.servers (repeat)")
    parser.add_argument("--lake", required=True, help="facts lake: a directory or URI")
    parser.add_argument("--interval", type=float, default=10.0, help="seconds between passes")
    parser.add_argument("--once", action="store_true", help="one pass, then exit")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    clusters = {alias: {"bootstrap.servers": servers} for alias, servers in (c.split("=", 1) for c in args.cluster)}
    collector = HeartbeatCollector(clusters, args.lake)
    stopping = threading.Event()
    try:
        while True:
            collector.run_once()
            if args.once or stopping.wait(args.interval):
                return 0
    except KeyboardInterrupt:
        return 0
    finally:
        collector.close()


if __name__ == "__main__":
    sys.exit(main())
