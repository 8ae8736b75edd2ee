"""Provisioning in the control plane: a flow's topics are created once, before the controller dispatches its tasks.

The controller queues the job when a flow was never provisioned, or was edited since (the job is idempotent, and
running tasks are not stopped for it). Only the first success gates dispatch: a task started while a
re-provisioning runs waits for the positions topic's metadata itself (`positions.load` has a deadline).
"""

from __future__ import annotations

import logging

from confluent_kafka import KafkaException
from django.utils import timezone

from controlplane.flows.models import Flow
from controlplane.flows.services import flow_config
from controlplane.orchestration.models import FlowPlan
from controlplane.orchestration.services import controller
from replication.kafka.clients import ClientFactory
from replication.kafka.provisioning import provision_flow

log = logging.getLogger(__name__)


def provision(flow_id: int) -> bool:
    """Create the flow's internal and remote topics and wait for their metadata; store the outcome on its plan."""
    started = timezone.now()  # an edit during the job is newer than this, so the flow is provisioned again
    flow = Flow.objects.select_related("source", "target").filter(pk=flow_id, enabled=True).first()
    if flow is None:
        return False
    FlowPlan.objects.get_or_create(flow=flow)  # the outcome is stored there, before any network I/O
    try:
        done = provision_flow(flow_config(flow), ClientFactory())
    except Exception as exc:  # any failure is stored with its reason, shown by the status API, and retried
        reason = exc.args[0].str() if isinstance(exc, KafkaException) else str(exc)
        FlowPlan.objects.filter(flow_id=flow_id).update(provision_error=f"{type(exc).__name__}: {reason}"[:4000])
        log.warning("flow %s: provisioning failed: %s", flow_id, reason)
        return False
    FlowPlan.objects.filter(flow_id=flow_id).update(
        provisioned_at=started, provision_error="", provision_dispatched_at=None
    )
    log.info("flow %s: %d remote topics provisioned in %.1fs", flow_id, len(done.remote_topics), done.seconds)
    return True


def provision_and_dispatch(flow_id: int) -> list[int]:
    """Provision, then dispatch the flow's tasks at once rather than at the next controller tick."""
    if not provision(flow_id):
        return []
    flow = Flow.objects.select_related("source", "target").filter(pk=flow_id).first()
    return controller.reconcile(flow) if flow is not None else []
