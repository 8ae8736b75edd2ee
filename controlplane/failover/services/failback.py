"""Step 8: the flow back (target->source) with offset syncs and checkpoints, so a later failover back is exact.

The reverse flow replicates what producers write to the target from now on; the groups' positions in the copies
they read in the target translate back through the offset syncs of the flow that made those copies.
"""

from __future__ import annotations

from typing import Any

from controlplane.audit.services import record, snapshot
from controlplane.failover.models import Failover
from controlplane.failover.results import FailbackResult
from controlplane.failover.services import context
from controlplane.flows.api.serializers import FlowSerializer
from controlplane.flows.models import Flow
from controlplane.flows.services import FLOW_PROPERTY_FIELDS


def failback_step(failover: Failover, inputs: dict[str, Any]) -> tuple[FailbackResult, bool]:
    """Set up the flow back (target->source) unless told not to; the flow is audited as created by whoever started
    the step's job."""
    if not inputs.get("set_up", True):
        return FailbackResult(skipped=True, reason="the operator chose not to set up the flow back"), True
    flows = context.flows(failover)
    if flows.inverse is not None:
        return _ready(flows.inverse, created=False), True
    if flows.forward is None:
        return FailbackResult(error="no flow source->target to mirror"), False
    if failover.dry_run:
        return FailbackResult(dry_run=True, would_create=f"{failover.target}->{failover.source}"), True
    serializer = FlowSerializer(data=reverse_values(flows.forward))
    if not serializer.is_valid():
        return FailbackResult(error="the flow back is refused", errors=dict(serializer.errors)), False
    flow = serializer.save()
    record(failover.job_by, "flow.create", flow, after=snapshot(flow))
    return _ready(flow, created=True), True


def reverse_values(forward: Flow) -> dict[str, Any]:
    """The forward flow's properties (filters, policy, intervals, delivery) with the clusters swapped."""
    values = {name: getattr(forward, name) for name in FLOW_PROPERTY_FIELDS}
    values.update(
        source=forward.target.alias,
        target=forward.source.alias,
        emit_offset_syncs_enabled=True,
        emit_checkpoints_enabled=True,
        emit_heartbeats_enabled=True,
    )
    return values


def _ready(flow: Flow, created: bool) -> FailbackResult:
    translation = (
        f"{flow.name} emits offset syncs and checkpoints for what is produced to {flow.source.alias}; "
        f"positions in copies made by {flow.target.alias}->{flow.source.alias} translate back through that "
        "flow's offset syncs"
    )
    return FailbackResult(flow=flow.pk, name=flow.name, created=created, translation=translation)
