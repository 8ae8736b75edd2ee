"""Celery tasks of the orchestration: thin wrappers around services (logic is tested by calling those)."""

from __future__ import annotations

from celery import Task, shared_task

from controlplane.flows.models import Flow
from controlplane.orchestration import signals
from controlplane.orchestration.services import provisioning, runner, topicsync


@shared_task(ignore_result=True)
def provision_flow(flow_id: int) -> list[int]:
    """Create the flow's topics once, before its tasks start; then dispatch its tasks (queued by the controller)."""
    return provisioning.provision_and_dispatch(flow_id)


@shared_task(bind=True, ignore_result=True, acks_late=False)
def run_assignment(self: Task[[int], str], assignment_id: int) -> str:
    """Long-running: replicate one task under a lease until it is paused, moved, restarted or the worker stops."""
    return runner.run_assignment(assignment_id, self.request.hostname or "local", stopping=signals.STOPPING)


@shared_task(ignore_result=True, autoretry_for=(Exception,), retry_backoff=5, max_retries=3)
def sync_topic_configs_and_acls(flow_id: int) -> dict[str, int]:
    """Periodic (dispatched by the controller at the flow's sync interval): topic configs and ACLs."""
    flow = Flow.objects.select_related("source", "target").filter(pk=flow_id, enabled=True).first()
    return topicsync.sync_topic_configs_and_acls(flow) if flow else {}


class CeleryDispatcher:
    """The controller's jobs queued on Celery (``services.dispatch.Dispatcher``)."""

    def provision_flow(self, flow_id: int) -> None:
        provision_flow.delay(flow_id)

    def run_assignment(self, assignment_id: int) -> None:
        run_assignment.delay(assignment_id)

    def sync_topic_configs_and_acls(self, flow_id: int) -> None:
        sync_topic_configs_and_acls.delay(flow_id)
