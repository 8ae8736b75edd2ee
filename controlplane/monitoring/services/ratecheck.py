"""The dashboard's records/s of each flow against the brokers' own rate: the growth of the end offsets of the
flow's remote topics in its target cluster (MM2's MirrorClient.remoteTopics from the flow's source, heartbeats
included, internal topics excluded) over the same run."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from confluent_kafka import TopicPartition

from controlplane.flows.mirror import mirror_client
from controlplane.flows.models import Flow
from controlplane.monitoring.services.graph import dashboard
from replication.kafka.clients import ClientFactory

READ_TIMEOUT_SECONDS = 10.0


@dataclass
class FlowRates:
    """One flow's readings of the dashboard, and the records its target gained meanwhile."""

    name: str
    readings: list[float] = field(default_factory=list)
    brokers_per_second: float | None = None

    def worst_deviation(self) -> float | None:
        """The largest |reading - brokers| / brokers, or None with no readings or a target that gained nothing."""
        if not self.readings or not self.brokers_per_second:
            return None
        return max(abs(value - self.brokers_per_second) / self.brokers_per_second for value in self.readings)


def remote_end_offsets(flow: Flow) -> int:
    """The sum of the end offsets of the flow's remote topics in its target cluster."""
    client = mirror_client(flow.target)
    topics = client.remote_topics(flow.source.alias)
    consumer = ClientFactory().consumer(client.cluster, "rate-check")
    try:
        total = 0
        for topic in sorted(topics):
            metadata = consumer.list_topics(topic, timeout=READ_TIMEOUT_SECONDS).topics[topic]
            for partition in metadata.partitions:
                end = consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=READ_TIMEOUT_SECONDS)
                total += int(end[1])
        return total
    finally:
        consumer.close()


def measure(
    flows: list[Flow],
    seconds: float,
    interval: float,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> list[FlowRates]:
    """Read the dashboard every interval for seconds; the brokers' rate is taken over the whole run."""
    start = {flow.name: remote_end_offsets(flow) for flow in flows}
    rates = {flow.name: FlowRates(flow.name) for flow in flows}
    started = clock()
    while clock() - started < seconds:
        for edge in dashboard()["edges"]:
            if edge["name"] in rates:
                rates[edge["name"]].readings.append(float(edge["records_per_second"]))
        sleep(interval)
    elapsed = clock() - started
    for flow in flows:
        rates[flow.name].brokers_per_second = (remote_end_offsets(flow) - start[flow.name]) / elapsed
    return [rates[flow.name] for flow in flows]
