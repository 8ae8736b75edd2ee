from __future__ import annotations

from django.apps import AppConfig


class ClustersConfig(AppConfig):
    """Kafka clusters known to the control plane: alias, bootstrap servers and credentials."""

    name = "controlplane.clusters"
    label = "clusters"
    verbose_name = "Kafka clusters"

    def ready(self) -> None:
        from controlplane.clusters import jobs  # models are loaded only once the registry is ready
        from controlplane.jobs.services import register

        register(jobs.KIND)
