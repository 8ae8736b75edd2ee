"""The librdkafka settings a flow may override on its producer and consumer.

An allow-list rather than a deny-list: the replication clients set delivery guarantees (acks, idempotence,
isolation, auto-commit) on purpose, and a flow must not be able to weaken them or redirect its clients
(bootstrap.servers, security settings, interceptors, plugins).
"""

from __future__ import annotations

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient

from replication.clientlog import logged

PRODUCER_OVERRIDES_ALLOWED = frozenset(
    {
        "linger.ms",
        "queue.buffering.max.ms",
        "batch.num.messages",
        "batch.size",
        "compression.type",
        "compression.codec",
        "compression.level",
        "message.max.bytes",
        "queue.buffering.max.messages",
        "queue.buffering.max.kbytes",
        "request.timeout.ms",
        "message.timeout.ms",
        "delivery.timeout.ms",
        "retry.backoff.ms",
        "retry.backoff.max.ms",
        "socket.send.buffer.bytes",
        "socket.receive.buffer.bytes",
        "client.rack",
        "sticky.partitioning.linger.ms",
    }
)
CONSUMER_OVERRIDES_ALLOWED = frozenset(
    {
        "fetch.max.bytes",
        "fetch.min.bytes",
        "fetch.wait.max.ms",
        "fetch.message.max.bytes",
        "max.partition.fetch.bytes",
        "fetch.queue.backoff.ms",
        "fetch.error.backoff.ms",
        "queued.min.messages",
        "queued.max.messages.kbytes",
        "receive.message.max.bytes",
        "socket.send.buffer.bytes",
        "socket.receive.buffer.bytes",
        "client.rack",
        "check.crcs",
        "session.timeout.ms",
        "heartbeat.interval.ms",
    }
)
# FlowConfig's map property (config.PROPERTIES) -> the settings it may hold.
ALLOWED = {"producer_overrides": PRODUCER_OVERRIDES_ALLOWED, "consumer_overrides": CONSUMER_OVERRIDES_ALLOWED}


def override_errors(overrides: dict[str, str], allowed: frozenset[str]) -> list[str]:
    """Why the overrides are refused: keys off the allow-list, then any value librdkafka rejects."""
    unknown = sorted(key for key in overrides if key not in allowed)
    if unknown:
        return [f"{key[:100]!r} is not an allowed override (allowed: {', '.join(sorted(allowed))})" for key in unknown]
    error = _librdkafka_error(overrides)
    return [error] if error else []


def _librdkafka_error(settings: dict[str, str]) -> str | None:
    # With no bootstrap servers the client never connects: creating it only validates the settings.
    if not settings:
        return None
    try:
        AdminClient(logged({**settings, "log_level": 0}))
    except KafkaException as exc:
        return str(exc.args[0].str())
    except (TypeError, ValueError) as exc:
        return str(exc)
    return None
