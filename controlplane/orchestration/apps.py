from __future__ import annotations

from django.apps import AppConfig


class OrchestrationConfig(AppConfig):
    name = "controlplane.orchestration"
    label = "orchestration"
    verbose_name = "Orchestration"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from controlplane.orchestration import signals  # noqa: F401  (registers Celery worker hooks)
