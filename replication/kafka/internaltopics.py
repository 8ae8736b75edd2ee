"""Internal topics of offset translation (offset syncs, checkpoints, heartbeats): where they live, how to read them.

| topic | cluster | cleanup |
|---|---|---|
| `mm2-offset-syncs.<other alias>.internal` | source, or target (`offset-syncs.topic.location`) | delete, 7 days |
| `<source alias>.checkpoints.internal` | target | compact, key (group, topic, partition) |
| `heartbeats` | source | compact, key (source alias, target alias) |

The offset-syncs topic is named after the *other* cluster, as MM2 does (KIP-716): in the source it is
`mm2-offset-syncs.<target alias>.internal`, in the target `mm2-offset-syncs.<source alias>.internal`, so flows
from several sources into one target never share it.

Offset syncs are NOT compacted: MM2 keys them by (topic, partition), so compaction would keep only the last sync
of a partition, and exact translation needs every sync of the range it translates. Storage is bounded by time
instead: syncs are few (one per gap or transaction, one frontier per commit of an active partition, see
`offsetsyncs`), and the emitter rewrites each partition's frontier before retention can expire it, so the
latest position of every partition stays translatable however long a partition stays idle.
"""

from __future__ import annotations

import logging
import time

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from replication.config import ClusterConfig, FlowConfig
from replication.errors import LEADER_NOT_READY
from replication.kafka.topicsync import STAMPED, effective_replication_factor
from replication.mm2.policy import checkpoints_topic

log = logging.getLogger(__name__)

OFFSET_SYNCS_RETENTION_MS = 7 * 24 * 3600 * 1000
OFFSET_SYNCS_CONFIG = {"cleanup.policy": "delete", "retention.ms": str(OFFSET_SYNCS_RETENTION_MS)}
COMPACTED_CONFIG = {"cleanup.policy": "compact"}
HEARTBEATS_CONFIG = {**COMPACTED_CONFIG, "message.timestamp.type": STAMPED}  # arrivals stamped by the broker
TIMEOUT = 30.0


def offset_syncs_cluster(flow: FlowConfig) -> ClusterConfig:
    return flow.source if flow.offset_syncs_topic_location == "source" else flow.target


def offset_syncs_topic(flow: FlowConfig) -> str:
    other = flow.target.alias if flow.offset_syncs_topic_location == "source" else flow.source.alias
    return f"mm2-offset-syncs.{other}.internal"


def flow_checkpoints_topic(flow: FlowConfig) -> str:
    return checkpoints_topic(flow.source.alias)


def ensure_topic(admin: AdminClient, topic: str, config: dict[str, str], replication_factor: int = -1) -> None:
    """Create a one-partition internal topic with config if it is missing (one partition keeps syncs in order).

    replication_factor -1 is the cluster's default (see effective_replication_factor)."""
    factor = effective_replication_factor(admin, replication_factor)
    try:
        admin.create_topics([NewTopic(topic, 1, factor, config=config)])[topic].result(timeout=TIMEOUT)
        log.info("created internal topic %s %s", topic, config)
    except KafkaException as exc:
        if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
            raise


class TopicTail:
    """Reads partition 0 of one topic from the beginning, then incrementally: each call returns what is new."""

    def __init__(self, consumer: Consumer, topic: str) -> None:
        self.consumer = consumer
        self.topic = topic
        self.next_offset = -1  # -1 until the topic exists and is assigned

    def read_to_end(self, timeout: float = TIMEOUT) -> list[Message]:
        """Every record written before this call (an empty list while the topic does not exist)."""
        high = self._end_offset()
        if high is None:
            return []
        if self.next_offset < 0:
            self.consumer.assign([TopicPartition(self.topic, 0, 0)])
            self.next_offset = 0
        records: list[Message] = []
        deadline = time.monotonic() + timeout
        while self.next_offset < high:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.topic}: not read to offset {high} within {timeout}s")
            self._consume(records, high)
        return records

    def _consume(self, records: list[Message], high: int) -> None:
        """One batch, all of it: an end-of-partition event may come before records that arrived after it.

        It asks for no more than what is missing, so it returns as soon as that is there (a batch otherwise
        waits out its timeout); offsets compaction removed are covered by the end-of-partition event.
        """
        for msg in self.consumer.consume(min(10000, high - self.next_offset), 0.5):
            error = msg.error()
            if error is None:
                records.append(msg)
                self.next_offset = (msg.offset() or 0) + 1
            elif error.code() == KafkaError._PARTITION_EOF:  # the end as of that fetch: past compacted offsets
                self.next_offset = max(self.next_offset, msg.offset() or 0)
            else:
                raise KafkaException(error)

    def _end_offset(self) -> int | None:
        try:
            low, high = self.consumer.get_watermark_offsets(TopicPartition(self.topic, 0), timeout=10)
        except KafkaException as exc:
            if exc.args[0].code() in LEADER_NOT_READY:
                return None  # not readable yet: asked again at the next update
            raise
        if self.next_offset >= 0 and self.next_offset < low:
            self.next_offset = low  # retention deleted what we had not read yet; nothing to do about it
        return int(high)

    def close(self) -> None:
        self.consumer.close()
