"""Cluster operations: librdkafka client settings (with the decrypted password) and the connectivity check.

``client_settings`` is for handing to ``replication/`` only: its result holds the plain password and must
never reach a response or a log line.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient

from controlplane.clusters.choices import SASL_PROTOCOLS, SSL_PROTOCOLS
from controlplane.clusters.models import Cluster
from replication.clientlog import logged
from replication.kafka.diagnosis import explain

log = logging.getLogger(__name__)
CONNECTIVITY_TIMEOUT_SECONDS = 5.0
_ATTEMPT_SECONDS = 0.5


def client_settings(cluster: Cluster) -> dict[str, str]:
    """librdkafka settings of the cluster: bootstrap.servers, security.protocol, sasl.*, ssl.ca.pem and the client
    certificate (ssl.certificate.pem, ssl.key.pem)."""
    settings = {"bootstrap.servers": cluster.bootstrap_servers, "security.protocol": str(cluster.security_protocol)}
    if cluster.security_protocol in SASL_PROTOCOLS:
        settings["sasl.mechanism"] = str(cluster.sasl_mechanism or "PLAIN")
        settings["sasl.username"] = cluster.sasl_username
        settings["sasl.password"] = cluster.sasl_password
    if cluster.security_protocol in SSL_PROTOCOLS and cluster.ssl_ca_pem:
        settings["ssl.ca.pem"] = cluster.ssl_ca_pem
    if cluster.security_protocol in SSL_PROTOCOLS and cluster.ssl_certificate_pem and cluster.has_ssl_key:
        settings["ssl.certificate.pem"] = cluster.ssl_certificate_pem
        settings["ssl.key.pem"] = cluster.ssl_key_pem
    return settings


def unregistered_servers(bootstrap_servers: str) -> list[str]:
    """The ``host:port`` entries that no registered cluster lists among its bootstrap servers.

    Operators check unsaved settings only against brokers an admin registered: otherwise the check's exact
    errors ("Connection refused" against a timeout) would let them map which ports are open on any host.
    """
    registered = {
        _server(entry)
        for bootstrap in Cluster.objects.values_list("bootstrap_servers", flat=True)
        for entry in bootstrap.split(",")
        if entry.strip()
    }
    return [entry.strip() for entry in bootstrap_servers.split(",") if _server(entry) not in registered]


def unregistered_message(servers: list[str]) -> str:
    return (
        f"{', '.join(servers)}: not a broker of a registered cluster; an operator may check only those "
        "(an admin may check any address)"
    )


def _server(entry: str) -> str:
    return entry.strip().lower()


def connectivity_check(cluster: Cluster, timeout: float = CONNECTIVITY_TIMEOUT_SECONDS) -> dict[str, Any]:
    """The cluster's brokers and topic count, or librdkafka's exact error when it cannot be reached."""
    check, _ = listing(cluster, timeout)
    return check


def listing(cluster: Cluster, timeout: float = CONNECTIVITY_TIMEOUT_SECONDS) -> tuple[dict[str, Any], set[str]]:
    """``connectivity_check`` and the names of the cluster's topics (none when unreachable) from the same metadata
    request. For a caller that needs both: listing a cluster of 10,000 partitions costs the worker's Python tens of
    milliseconds, and the observer did it three times per cluster every 15 s."""
    errors: list[KafkaError] = []
    config = {
        **client_settings(cluster),
        "socket.timeout.ms": int(timeout * 1000),
        "socket.connection.setup.timeout.ms": int(timeout * 1000),
        "error_cb": errors.append,
        # Every failed connection attempt would be logged; the first error is reported instead.
        "log_level": 0,
    }
    try:
        admin = AdminClient(logged(config))
    except (KafkaException, TypeError, ValueError) as exc:
        return {"ok": False, "error": _describe(exc.args[0])}, set()
    deadline = time.monotonic() + timeout
    while True:
        try:
            metadata = admin.list_topics(timeout=min(_ATTEMPT_SECONDS, max(0.01, deadline - time.monotonic())))
        except KafkaException as exc:
            admin.poll(0)  # serves error_cb with the errors met while connecting
            # Give up early only once every broker failed; the connection error says more than "timed out".
            if time.monotonic() >= deadline or _all_brokers_down(errors):
                error = _first_connection_error(errors) or _describe(exc.args[0])
                return {"ok": False, "error": explain(error, client_settings(cluster))}, set()
            continue
        brokers = [{"id": b.id, "host": b.host, "port": b.port} for b in sorted(metadata.brokers.values(), key=_id)]
        topics = {name for name, meta in metadata.topics.items() if meta.error is None}
        return {"ok": True, "brokers": brokers, "topic_count": len(metadata.topics)}, topics


def _all_brokers_down(errors: list[KafkaError]) -> bool:
    return any(error.code() == KafkaError._ALL_BROKERS_DOWN for error in errors)


def _first_connection_error(errors: list[KafkaError]) -> str | None:
    specific = [error for error in errors if error.code() != KafkaError._ALL_BROKERS_DOWN]
    return _describe((specific or errors)[0]) if errors else None


def _id(broker: Any) -> int:
    return int(broker.id)


def _describe(error: KafkaError | Any) -> str:
    return str(error.str()) if isinstance(error, KafkaError) else str(error)
