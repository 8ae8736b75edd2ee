from __future__ import annotations

from django.apps import AppConfig


class AlertsConfig(AppConfig):
    """Alert rules over what monitoring already knows (lag, p99, tasks, data loss, clusters), the alerts they open
    and resolve on beat, and the webhook targets that hear about them."""

    name = "controlplane.alerts"
    label = "alerts"
    verbose_name = "Mirrorplane alerts"
