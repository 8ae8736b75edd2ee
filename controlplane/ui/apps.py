from __future__ import annotations

from django.apps import AppConfig


class UiConfig(AppConfig):
    """The browser UI: pages, forms, the flow form's topic preview job and a flow's analytics reports."""

    name = "controlplane.ui"
    label = "ui"
    verbose_name = "Mirrorplane UI"

    def ready(self) -> None:
        from controlplane.jobs.services import register  # models are loaded only once the registry is ready
        from controlplane.ui import jobs

        register(jobs.KIND)
