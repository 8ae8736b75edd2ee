from __future__ import annotations

from django.apps import AppConfig


class FlowsConfig(AppConfig):
    """Replication flows (source cluster -> target cluster) with MirrorMaker 2 properties."""

    name = "controlplane.flows"
    label = "flows"
    verbose_name = "Replication flows"

    def ready(self) -> None:
        from controlplane.flows import takeover  # models are loaded only once the registry is ready
        from controlplane.jobs.services import register

        register(takeover.KIND)
