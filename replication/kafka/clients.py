"""Client settings for replication, in one place: the no-data-loss and throughput choices with their reasons."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient

from replication.config import FlowConfig
from replication.kafka.clientlog import LIBRDKAFKA_LOG as _librdkafka_log  # rate-limited

log = logging.getLogger("replication.clients")


class _ExpectedWarnings(logging.Filter):
    """enable.gapless.guarantee is chosen on purpose (see producer_config); its 'experimental' notice is noise."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "enable.gapless.guarantee is experimental" not in record.getMessage()


_librdkafka_log.addFilter(_ExpectedWarnings())

TRANSACTION_TIMEOUT_MS = 60000
ErrorCallback = Callable[[KafkaError], None]


def transactional_id(flow: FlowConfig, task_id: int) -> str:
    """Stable per flow and task, so a restarted task fences its zombie (KIP-98 producer epoch)."""
    return f"mirrorplane-{flow.source.alias}-{flow.target.alias}-{task_id}"


def consumer_config(flow: FlowConfig, task_id: int) -> dict[str, Any]:
    config: dict[str, Any] = {
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
        "queued.max.messages.kbytes": 65536,
        "isolation.level": "read_committed" if flow.exactly_once else "read_uncommitted",
        "logger": _librdkafka_log,
    }
    config.update(flow.consumer_overrides)
    return config


def position_reader_config(flow: FlowConfig, task_id: int) -> dict[str, Any]:
    """A consumer of the target cluster, for reading back the positions topic."""
    return {
        **flow.target.client,
        "group.id": f"mirrorplane-{flow.source.alias}-{flow.target.alias}-positions",
        "client.id": f"mirrorplane-{flow.name}-{task_id}-positions",
        "enable.auto.commit": False,
        "logger": _librdkafka_log,
    }


def producer_config(flow: FlowConfig, task_id: int) -> dict[str, Any]:
    config: dict[str, Any] = {
        **flow.target.client,
        "client.id": f"mirrorplane-{flow.name}-{task_id}-producer",
        "acks": "all",
        "enable.idempotence": True,
        "linger.ms": 5,
        "batch.num.messages": 10000,
        "queue.buffering.max.messages": 500000,
        "queue.buffering.max.kbytes": 1048576,
        # Let the target broker judge record size; its error names the limit instead of a local refusal.
        "message.max.bytes": 100 * 1024 * 1024,
        "logger": _librdkafka_log,
    }
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


def settings_error(settings: Mapping[str, str], logger: logging.Logger) -> str | None:
    """librdkafka's reason for refusing these client settings (a name or a value), or None if it takes them."""
    # Without brokers the client never connects: creating it only validates the configuration.
    config: dict[str, Any] = {
        k: v for k, v in settings.items() if k not in ("bootstrap.servers", "metadata.broker.list")
    }
    if not config:
        return None
    config["logger"] = logger
    try:
        AdminClient(config)
    except KafkaException as exc:
        return str(exc.args[0].str())
    except (TypeError, ValueError) as exc:  # e.g. a callback setting given a string
        return str(exc)
    return None


class ClientFactory:
    """Builds the clients of a flow; tests substitute fakes through the same three methods."""

    def consumer(
        self,
        flow: FlowConfig,
        task_id: int,
        error_cb: ErrorCallback | None = None,
        settings: Mapping[str, Any] | None = None,
    ) -> Consumer:
        config = {**consumer_config(flow, task_id), **(settings or {})}
        if error_cb is not None:
            config["error_cb"] = error_cb
        return Consumer(config)

    def producer(self, flow: FlowConfig, task_id: int, error_cb: ErrorCallback | None = None) -> Producer:
        config = producer_config(flow, task_id)
        if error_cb is not None:
            config["error_cb"] = error_cb
        return Producer(config)

    def admin(self, client: dict[str, Any] | Any) -> AdminClient:
        config: dict[str, Any] = {**dict(client), "logger": _librdkafka_log}
        return AdminClient(config)
