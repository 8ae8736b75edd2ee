from __future__ import annotations

from django.apps import AppConfig


class MonitoringConfig(AppConfig):
    """What is known of the running flows and clusters: sampled time series, cluster and checkpoint observations,
    health, and the replication graph built from them."""

    name = "controlplane.monitoring"
    label = "monitoring"
    verbose_name = "Mirrorplane monitoring"
