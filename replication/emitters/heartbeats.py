"""HeartbeatEmitter: (source alias, target alias, timestamp) records in `heartbeats` topics, where MM2 writes them.

MM2's MirrorHeartbeatConnector for A->B is a source connector run by the A->B herder, whose worker produces to the
target: its heartbeats (source A, target B) land in B's `heartbeats` (MirrorHeartbeatConnector creates the topic
with its target admin; MirrorConnectorsIntegrationBaseTest reads them there). MM2 also runs the B->A herder's
heartbeat connector by default, even with `B->A.enabled=false` (MirrorMakerConfig.clusterPairs: "for a given
replication flow A->B with heartbeats, 2 herders are required"), so (source B, target A) lands in A's `heartbeats`.
A flow's emitter writes both, and MM2's tooling reads a Mirrorplane deployment unchanged.

Hops come from topic names only: the flow replicates the source's `heartbeats` like data (the topic filter always
lets heartbeats through), each hop prefixing it, so a cluster holding `backup.us-west.heartbeats` is two hops
downstream of us-west. A cluster's own `heartbeats` counts no hop (MirrorClient.countHopsForTopic answers -1 for
a topic with no source). The records carry the emitter's clock.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from confluent_kafka import Producer

from replication.config import ClusterConfig, FlowConfig
from replication.kafka.clients import ClientFactory
from replication.kafka.internaltopics import HEARTBEATS_CONFIG, TIMEOUT, ensure_topic
from replication.mm2.policy import HEARTBEATS_TOPIC
from replication.mm2.records import Heartbeat


class HeartbeatEmitter:
    """One flow's heartbeats: `run_once()` writes (source, target) to the target's `heartbeats`, as MM2's heartbeat
    connector of the flow does, and (target, source) to the source's, as MM2's heartbeat connector of the reverse
    pair does: the one the flow replicates, so that its target sees the source one hop upstream."""

    def __init__(
        self, flow: FlowConfig, clients: ClientFactory | None = None, clock: Callable[[], float] = time.time
    ) -> None:
        self.flow = flow
        self.clients = clients or ClientFactory()
        self.clock = clock
        self.interval = flow.emit_heartbeats_interval_seconds
        self._producers: list[Producer] = []

    def beats(self, timestamp: int) -> list[tuple[ClusterConfig, Heartbeat]]:
        """One round's heartbeats, each with the cluster whose `heartbeats` it goes to: the target's first."""
        source, target = self.flow.source, self.flow.target
        return [
            (target, Heartbeat(source.alias, target.alias, timestamp)),
            (source, Heartbeat(target.alias, source.alias, timestamp)),
        ]

    def run_once(self) -> bool:
        beats = self.beats(int(self.clock() * 1000))
        if not self._producers:
            for cluster, _ in beats:
                ensure_topic(self.clients.admin(cluster), HEARTBEATS_TOPIC, HEARTBEATS_CONFIG)
            self._producers = [self.clients.producer(cluster) for cluster, _ in beats]
        for producer, (_, beat) in zip(self._producers, beats, strict=True):
            key, value = beat.to_bytes()
            producer.produce(HEARTBEATS_TOPIC, value, key, 0, timestamp=beat.timestamp)
        for producer, (cluster, _) in zip(self._producers, beats, strict=True):
            if producer.flush(TIMEOUT):
                where = f"{cluster.alias}'s {HEARTBEATS_TOPIC}"
                raise TimeoutError(f"{self.flow.name}: heartbeat not delivered to {where} within {TIMEOUT}s")
        return True

    def close(self) -> None:
        for producer in self._producers:
            producer.flush(TIMEOUT)
