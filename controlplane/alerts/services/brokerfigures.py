"""The broker-health kinds' values per cluster, read from the observer's ``BrokerHealth`` rows: no Kafka call here.

- ``under_replicated``: partitions whose ISR is smaller than their replicas.
- ``offline_partitions``: partitions without a live leader.
- ``under_min_isr``: partitions without a leader or with ISR below the topic's ``min.insync.replicas``.
- ``brokers_down``: brokers seen since the cluster was last edited and missing from its metadata now.

None (no data) before the first read, when the last read failed (the cluster unreachable: that is
``cluster_unreachable``'s alert), or when the row is older than three observer periods.
"""

from __future__ import annotations

from datetime import datetime

from controlplane.alerts.choices import AlertKind
from controlplane.clusters.models import Cluster
from controlplane.monitoring.models import BrokerHealth
from controlplane.monitoring.services import brokerhealth
from controlplane.monitoring.services.health import stale_after

FIELDS = {
    AlertKind.UNDER_REPLICATED: "under_replicated",
    AlertKind.OFFLINE_PARTITIONS: "offline",
    AlertKind.UNDER_MIN_ISR: "under_min_isr",
    AlertKind.BROKERS_DOWN: "brokers_down",
}


def broker_values(kind: str, now: datetime) -> list[tuple[Cluster, float | None]]:
    """Each cluster and the kind's value for it."""
    rows = {h.cluster_id: h for h in BrokerHealth.objects.filter(at__gte=now - stale_after())}
    found: list[tuple[Cluster, float | None]] = []
    for cluster in Cluster.objects.order_by("pk"):
        value = brokerhealth.figures(rows.get(cluster.pk)).get(FIELDS[AlertKind(kind)])
        found.append((cluster, float(value) if isinstance(value, int) else None))
    return found
