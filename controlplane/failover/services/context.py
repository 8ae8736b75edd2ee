"""What a failover works with: its flows (source->target, and target->source if any) and their data-plane configs."""

from __future__ import annotations

from dataclasses import dataclass

from controlplane.failover.models import Failover
from controlplane.flows.models import Flow
from controlplane.flows.services import flow_config
from replication.config import FlowConfig


@dataclass(frozen=True)
class Flows:
    forward: Flow | None  # source -> target: replicates what the groups read in the source
    inverse: Flow | None  # target -> source: its copies are what the groups read when failing back

    def configs(self) -> tuple[FlowConfig | None, FlowConfig | None]:
        return (
            flow_config(self.forward) if self.forward is not None else None,
            flow_config(self.inverse) if self.inverse is not None else None,
        )


def flows(failover: Failover) -> Flows:
    both = Flow.objects.select_related("source", "target")
    forward = both.filter(source=failover.source, target=failover.target).first()
    inverse = both.filter(source=failover.target, target=failover.source).first()
    return Flows(forward, inverse)
