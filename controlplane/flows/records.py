"""Records of a flow's source partition beside their copies in the remote topic: the operator's console read.

A request reads at most MAX_RECORDS records of the source partition from an offset (or the first at or after a
timestamp), the flow's offset syncs, and the stretch of the remote partition their copies fall in (at most
MAX_TARGET_RECORDS). Each read has a deadline of READ_SECONDS and at most MAX_RECORDS * 1 MiB is held, so the whole
request is bounded to a few seconds like the cluster browser's reads; it runs outside any transaction (the flow row
is read before the first Kafka call). Clients are built from the flow's clusters (``flow_config``), each used only
for its own cluster's bootstrap servers.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, TopicPartition
from rest_framework.exceptions import ValidationError

from controlplane.clusters.reads import reading
from controlplane.flows.models import Flow
from controlplane.flows.recordmatch import NO_RECORD, Fingerprint, Location, candidate, confirm, fingerprint
from controlplane.flows.recordrender import Render, headers_rendered, rendered
from controlplane.flows.services import flow_config
from replication.clientlog import logged
from replication.config import ClusterConfig, FlowConfig
from replication.kafka.clients import ClientFactory
from replication.mm2.filters import TopicFilter
from replication.offsets.syncstore import OffsetSyncReader, OffsetSyncStore

MAX_RECORDS = 50
MAX_TARGET_RECORDS = 2 * MAX_RECORDS  # a sparse sync's range is searched only this far
READ_SECONDS = 3.0  # per read: source records, offset syncs, remote records
SYNCS_SECONDS = 5.0  # the flow's offset-syncs topic, read from its start
_TIMESTAMP_TYPES = {1: "CreateTime", 2: "LogAppendTime"}


@dataclass(frozen=True)
class RecordQuery:
    """One partition of a source topic of the flow, from ``offset`` or from the first record at or after
    ``timestamp`` (ms), ``limit`` records, rendered as ``render``; ``contents`` False: sizes and names only."""

    topic: str
    partition: int
    offset: int | None = None
    timestamp: int | None = None
    limit: int = MAX_RECORDS
    render: Render = "text"
    contents: bool = True


def records(flow: Flow, query: RecordQuery) -> dict[str, Any]:
    """The source records side by side with their copies, each with where its copy is and how that is known."""
    config = _checked(flow, query.topic)
    remote = config.policy().format_remote_topic(config.source.alias, query.topic)
    return reading(config.name, lambda: _read(config, remote, query), [flow.source, flow.target])


def find(flow: Flow, topic: str, partition: int, offset: int) -> dict[str, Any]:
    """The copy of one source record: its target offset, or the reason it cannot be given."""
    found = records(flow, RecordQuery(topic, partition, offset=offset, limit=1, contents=False))
    row = found["records"][0] if found["records"] else None
    match = row["match"] if row is not None and row["source"]["offset"] == offset else _no_record(found, offset)
    return {"topic": topic, "partition": partition, "offset": offset, "remote_topic": found["remote_topic"], **match}


def _no_record(found: dict[str, Any], offset: int) -> dict[str, Any]:
    low, high = found["source"]["start_offset"], found["source"]["end_offset"]
    where = f"offsets {low}..{high - 1}" if high > low else "the partition is empty"
    reason = f"no record at offset {offset} of the source partition ({where}; compaction and transaction markers "
    return Location(NO_RECORD, reason + "leave gaps)").as_dict()


def _checked(flow: Flow, topic: str) -> FlowConfig:
    config = flow_config(flow)
    if not TopicFilter(config).should_replicate(topic):
        raise ValidationError({"topic": [f"{topic!r} is not replicated by this flow (its topic filter)"]})
    return config


def _read(config: FlowConfig, remote: str, query: RecordQuery) -> dict[str, Any]:
    source, target = _consumer(config.source), _consumer(config.target)
    try:
        _require_partition(source, query.topic, query.partition)
        low, high = _watermarks(source, query.topic, query.partition)
        start = _start(source, query, low, high)
        upstream = _consume(source, query.topic, query.partition, start, min(high - start, query.limit))
        store = _syncs(config) if upstream else OffsetSyncStore()
        t_low, t_high = _watermarks(target, remote, query.partition)
        located = [candidate(store, query.topic, query.partition, msg.offset() or 0, t_high) for msg in upstream]
        downstream = _copies(target, remote, query.partition, located, t_low, t_high)
    finally:
        source.close()
        target.close()
    by_offset = {msg.offset() or 0: msg for msg in downstream}
    prints = {offset: _print(msg) for offset, msg in by_offset.items()}
    rows = []
    for msg, location in zip(upstream, located, strict=True):
        match = confirm(location, _print(msg), prints, t_low)
        copy = by_offset.get(match.target_offset) if match.target_offset is not None else None
        rows.append({"source": _side(msg, query), "target": _side(copy, query), "match": match.as_dict()})
    return {
        "topic": query.topic,
        "partition": query.partition,
        "remote_topic": remote,
        "contents": query.contents,
        "render": query.render if query.contents else None,
        "source": {"start_offset": low, "end_offset": high},
        "target": {"start_offset": t_low, "end_offset": t_high},
        "records": rows,
        "next_offset": (upstream[-1].offset() or 0) + 1 if upstream else None,
    }


def _consumer(cluster: ClusterConfig) -> Consumer:
    """A consumer that joins no group and commits nothing; committed records only, as a consumer of either side
    sees them."""
    milliseconds = int(READ_SECONDS * 1000)
    return Consumer(
        logged(
            {
                **cluster.client,
                "group.id": f"mirrorplane-records-{uuid.uuid4().hex[:8]}",
                "enable.auto.commit": False,
                "enable.partition.eof": True,
                "isolation.level": "read_committed",
                "socket.timeout.ms": milliseconds,
                "socket.connection.setup.timeout.ms": milliseconds,
                "fetch.wait.max.ms": 100,
                # The prefetch queue is bounded too: a request holds at most about this much besides its records.
                "queued.max.messages.kbytes": 16384,
            }
        )
    )


def _require_partition(consumer: Consumer, topic: str, partition: int) -> None:
    meta = consumer.list_topics(topic, timeout=READ_SECONDS).topics.get(topic)
    if meta is None or meta.error is not None:
        raise ValidationError({"topic": [f"no topic {topic!r} on the source cluster"]})
    if partition not in meta.partitions:
        raise ValidationError({"partition": [f"{topic!r} has partitions 0..{len(meta.partitions) - 1}"]})


def _watermarks(consumer: Consumer, topic: str, partition: int) -> tuple[int, int]:
    """Log start and end offsets; (0, 0) for a remote topic not created yet."""
    try:
        low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=READ_SECONDS)
    except KafkaException as exc:
        if exc.args[0].code() in (KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError._UNKNOWN_PARTITION):
            return 0, 0
        raise
    return int(low), int(high)


def _start(consumer: Consumer, query: RecordQuery, low: int, high: int) -> int:
    if query.timestamp is None:
        return min(max(query.offset or 0, low), high)
    tp = TopicPartition(query.topic, query.partition, query.timestamp)
    found = consumer.offsets_for_times([tp], timeout=READ_SECONDS)[0].offset
    return int(found) if found >= 0 else high  # none at or after it: nothing to show


def _consume(consumer: Consumer, topic: str, partition: int, start: int, count: int) -> list[Message]:
    """Up to ``count`` records from ``start``, until the end of the partition or READ_SECONDS."""
    if count <= 0:
        return []
    consumer.assign([TopicPartition(topic, partition, start)])
    found: list[Message] = []
    deadline = time.monotonic() + READ_SECONDS
    while len(found) < count and (left := deadline - time.monotonic()) > 0:
        for msg in consumer.consume(count - len(found), min(left, 0.5)):
            error = msg.error()
            if error is None:
                found.append(msg)
            elif error.code() == KafkaError._PARTITION_EOF:
                return found
            else:
                raise KafkaException(error)
    return found


def _syncs(config: FlowConfig) -> OffsetSyncStore:
    reader = OffsetSyncReader(config, ClientFactory())
    try:
        reader.update(timeout=SYNCS_SECONDS)
    finally:
        reader.close()
    return reader.store


def _copies(
    consumer: Consumer, remote: str, partition: int, located: list[Location], low: int, high: int
) -> list[Message]:
    """The remote records the candidates fall in, read in one stretch of at most MAX_TARGET_RECORDS."""
    spans = [(loc.low, loc.high) for loc in located if loc.low is not None and loc.high is not None]
    if not spans:
        return []
    first = max(min(lo for lo, _ in spans), low)
    last = min(max(hi for _, hi in spans), high - 1, first + MAX_TARGET_RECORDS - 1)
    return _consume(consumer, remote, partition, first, last - first + 1)


def _print(msg: Message) -> Fingerprint:
    return fingerprint(_bytes(msg.key()), _bytes(msg.value()), _headers(msg))


def _side(msg: Message | None, query: RecordQuery) -> dict[str, Any] | None:
    if msg is None:
        return None
    kind, timestamp = msg.timestamp()
    key, value = msg.key(), msg.value()
    return {
        "offset": msg.offset(),
        "timestamp": timestamp if kind else None,
        "timestamp_type": _TIMESTAMP_TYPES.get(kind),
        "key": rendered(_bytes(key), query.render, query.contents),
        "value": rendered(_bytes(value), query.render, query.contents),
        "headers": headers_rendered(_headers(msg), query.render, query.contents),
    }


def _bytes(data: str | bytes | None) -> bytes | None:
    return data.encode() if isinstance(data, str) else data


def _headers(msg: Message) -> list[tuple[str, bytes | None]]:
    """As consumed: a list of (name, bytes or None); the stubs allow the shapes a producer accepts."""
    headers = msg.headers() or []
    pairs = headers.items() if isinstance(headers, dict) else headers
    return [(name, _bytes(value)) for name, value in pairs]
