"""librdkafka's judgement of client settings (names and values), asked without any broker: a config is checked
before it is accepted, where the runtime's clients (replication.kafka) are not yet built."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient

from replication.clientlog import logged


def settings_error(settings: Mapping[str, str]) -> str | None:
    """librdkafka's reason for refusing these client settings (a name or a value), or None if it takes them."""
    # Without brokers the client never connects: creating it only validates the configuration.
    config: dict[str, Any] = {
        k: v for k, v in settings.items() if k not in ("bootstrap.servers", "metadata.broker.list")
    }
    if not config:
        return None
    try:
        AdminClient(logged(config))
    except KafkaException as exc:
        return str(exc.args[0].str())
    except (TypeError, ValueError) as exc:  # e.g. a callback setting given a string
        return str(exc)
    return None
