"""Client settings for replication, in one place: the no-data-loss and throughput choices with their reasons, and
ClientFactory, which builds every Kafka client of the data plane from them."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from confluent_kafka import Consumer, KafkaError, Producer
from confluent_kafka.admin import AdminClient

from replication.clientlog import LIBRDKAFKA_LOG, logged
from replication.config import ClusterConfig, FlowConfig

log = logging.getLogger(__name__)


class _ExpectedWarnings(logging.Filter):
    """enable.gapless.guarantee is chosen on purpose (see producer_config); its 'experimental' notice is noise."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "enable.gapless.guarantee is experimental" not in record.getMessage()


LIBRDKAFKA_LOG.addFilter(_ExpectedWarnings())

TRANSACTION_TIMEOUT_MS = 60000
ErrorCallback = Callable[[KafkaError], None]


def transactional_id(flow: FlowConfig, task_id: int) -> str:
    """Stable per flow and task, so a restarted task fences its zombie (KIP-98 producer epoch)."""
    return f"mirrorplane-{flow.source.alias}-{flow.target.alias}-{task_id}"


def consumer_config(flow: FlowConfig, task_id: int) -> dict[str, Any]:
    config = logged(
        {
            **flow.source.client,
            # Required by the client, but never used to join a group: partitions are assigned manually.
            "group.id": f"mirrorplane-{flow.source.alias}-{flow.target.alias}",
            "client.id": f"mirrorplane-{flow.name}-{task_id}-consumer",
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            # Never jump silently: an out-of-range position surfaces as an error and is reported as data loss.
            "auto.offset.reset": "error",
            # The default 1000 ms backoff halves throughput (performance baseline).
            "fetch.queue.backoff.ms": 10,
            # How long the broker holds a fetch that finds no new record. A record arriving answers it at once, so
            # a longer hold costs no latency; it is how often an idle task's fetch of every partition goes round
            # (librdkafka's 500 ms: 0.2-0.4 % of a core more per 750 idle partitions, bench/README.md).
            "fetch.wait.max.ms": 2000,
            "queued.max.messages.kbytes": 65536,
            "isolation.level": "read_committed" if flow.exactly_once else "read_uncommitted",
        }
    )
    # auto.offset.reset only chooses where a partition without a stored position starts (dataloss.check_start);
    # the client keeps "error", so a position that leaves the log while running is never jumped over silently.
    config.update({key: value for key, value in flow.consumer_overrides.items() if key != "auto.offset.reset"})
    return config


def position_reader_config(flow: FlowConfig, task_id: int) -> dict[str, Any]:
    """A consumer of the target cluster, for reading back the positions topic."""
    return logged(
        {
            **flow.target.client,
            "group.id": f"mirrorplane-{flow.source.alias}-{flow.target.alias}-positions",
            "client.id": f"mirrorplane-{flow.name}-{task_id}-positions",
            "enable.auto.commit": False,
        }
    )


def producer_config(flow: FlowConfig, task_id: int) -> dict[str, Any]:
    config = logged(
        {
            **flow.target.client,
            "client.id": f"mirrorplane-{flow.name}-{task_id}-producer",
            "acks": "all",
            "enable.idempotence": True,
            # At least once, a consumed batch is produced at once, so batches fill without lingering: 1 ms against
            # librdkafka's 5 halved p50 at 20k records/s (8.2 -> 4.8 ms) for 26 % of a core against 20 %. Exactly
            # once, the commit flushes anyway (bench/README.md).
            "linger.ms": 5 if flow.exactly_once else 1,
            "batch.num.messages": 10000,
            "queue.buffering.max.messages": 500000,
            "queue.buffering.max.kbytes": 1048576,
            # Let the target broker judge record size; its error names the limit instead of a local refusal.
            "message.max.bytes": 100 * 1024 * 1024,
        }
    )
    if flow.exactly_once:
        config["transactional.id"] = transactional_id(flow, task_id)
        config["transaction.timeout.ms"] = TRANSACTION_TIMEOUT_MS
        config["message.timeout.ms"] = TRANSACTION_TIMEOUT_MS
    else:
        # One delivery report per partition run is enough only because nothing can leave a gap:
        # retries never time out, and any failure that could skip a record is fatal for the producer.
        config["message.timeout.ms"] = 0
        config["enable.gapless.guarantee"] = True
    config.update(flow.producer_overrides)
    return config


def internal_producer_config(cluster: ClusterConfig) -> dict[str, Any]:
    """A producer of internal topics (offset syncs, checkpoints, heartbeats)."""
    return logged(
        {
            **cluster.client,
            "enable.idempotence": True,  # keeps one partition's syncs in the order they were written
            # A lost record fails everything after it (fatal) rather than leave a hole readers would step over.
            "enable.gapless.guarantee": True,
            "acks": "all",
            "linger.ms": 5,
        }
    )


def internal_consumer_config(cluster: ClusterConfig, purpose: str) -> dict[str, Any]:
    """A consumer that reads internal topics from the beginning (see internaltopics.TopicTail)."""
    return logged(
        {
            **cluster.client,
            "group.id": f"mirrorplane-{purpose}",  # never joined: partitions are assigned manually
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "auto.offset.reset": "earliest",
            "isolation.level": "read_committed",
            # A fetch waiting for data holds the connection: the end-offset query behind it would wait this long.
            "fetch.wait.max.ms": 100,
        }
    )


class ClientFactory:
    """Builds every Kafka client of the data plane: a task's consumer and producer, and any cluster's admin client
    and internal-topic producer and consumer. Tests substitute fakes with the methods they use."""

    def task_consumer(
        self,
        flow: FlowConfig,
        task_id: int,
        error_cb: ErrorCallback | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> Consumer:
        return Consumer(logged(_with_error_cb({**consumer_config(flow, task_id), **(settings or {})}, error_cb)))

    def task_producer(self, flow: FlowConfig, task_id: int, error_cb: ErrorCallback | None = None) -> Producer:
        return Producer(logged(_with_error_cb(producer_config(flow, task_id), error_cb)))

    def admin(self, cluster: ClusterConfig) -> AdminClient:
        return AdminClient(logged(cluster.client))

    def producer(self, cluster: ClusterConfig, error_cb: ErrorCallback | None = None) -> Producer:
        """A producer of the cluster's internal topics."""
        return Producer(logged(_with_error_cb(internal_producer_config(cluster), error_cb)))

    def consumer(self, cluster: ClusterConfig, purpose: str) -> Consumer:
        """A consumer of the cluster's internal topics; purpose names its (never joined) group."""
        return Consumer(logged(internal_consumer_config(cluster, purpose)))


def _with_error_cb(config: dict[str, Any], error_cb: ErrorCallback | None) -> dict[str, Any]:
    if error_cb is not None:
        config["error_cb"] = error_cb
    return config
