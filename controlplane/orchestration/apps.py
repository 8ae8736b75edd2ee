from __future__ import annotations

from django.apps import AppConfig


class OrchestrationConfig(AppConfig):
    name = "controlplane.orchestration"
    label = "orchestration"
    verbose_name = "Orchestration"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Imported once the models are loaded: the Celery worker hooks register themselves, and the controller's
        # jobs are queued on Celery.
        from controlplane.orchestration import signals  # noqa: F401
        from controlplane.orchestration.services import dispatch
        from controlplane.orchestration.tasks import CeleryDispatcher

        dispatch.use(CeleryDispatcher())
