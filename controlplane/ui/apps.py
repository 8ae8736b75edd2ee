from __future__ import annotations

from django.apps import AppConfig


class UiConfig(AppConfig):
    """The browser UI: pages, the dashboard's data, and the flow time series sampled for its charts."""

    name = "controlplane.ui"
    label = "ui"
    verbose_name = "Mirrorplane UI"

    def ready(self) -> None:
        from controlplane.jobs.services import register  # models are loaded only once the registry is ready
        from controlplane.ui import jobs

        register(jobs.KIND)
