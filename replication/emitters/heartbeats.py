"""HeartbeatEmitter: (source alias, target alias, timestamp) records in the source cluster's `heartbeats` topic.

The flow replicates `heartbeats` like data (the topic filter always lets heartbeats through), so each hop
prefixes it: a cluster that sees `backup.us-west.heartbeats` is two hops downstream of us-west. `MirrorClient`
reads reachability from these topic names; the records themselves carry the source clock.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from confluent_kafka import Producer

from replication.config import FlowConfig
from replication.kafka.clients import ClientFactory
from replication.kafka.internaltopics import HEARTBEATS_CONFIG, TIMEOUT, ensure_topic
from replication.mm2.policy import HEARTBEATS_TOPIC
from replication.mm2.records import Heartbeat


class HeartbeatEmitter:
    """One flow's heartbeats: `run_once()` writes one heartbeat to `heartbeats` in the source cluster."""

    def __init__(
        self, flow: FlowConfig, clients: ClientFactory | None = None, clock: Callable[[], float] = time.time
    ) -> None:
        self.flow = flow
        self.clients = clients or ClientFactory()
        self.clock = clock
        self.interval = flow.emit_heartbeats_interval_seconds
        self._producer: Producer | None = None

    def run_once(self) -> bool:
        if self._producer is None:
            ensure_topic(self.clients.admin(self.flow.source), HEARTBEATS_TOPIC, HEARTBEATS_CONFIG)
            self._producer = self.clients.producer(self.flow.source)
        beat = Heartbeat(self.flow.source.alias, self.flow.target.alias, int(self.clock() * 1000))
        key, value = beat.to_bytes()
        self._producer.produce(HEARTBEATS_TOPIC, value, key, 0, timestamp=beat.timestamp)
        remaining = self._producer.flush(TIMEOUT)
        if remaining:
            raise TimeoutError(f"{self.flow.name}: heartbeat not delivered to {HEARTBEATS_TOPIC} within {TIMEOUT}s")
        return True

    def close(self) -> None:
        if self._producer is not None:
            self._producer.flush(TIMEOUT)
