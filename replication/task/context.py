"""TaskContext: what every part of one replication task shares, built once and handed to each part whole, as MM2
hands each part of a task its one config (MirrorSourceTaskConfig) rather than the config's fields one by one."""

from __future__ import annotations

from dataclasses import dataclass

from replication.config import FlowConfig
from replication.kafka import positions
from replication.kafka.clients import ClientFactory
from replication.metrics.registry import REGISTRY, MetricsRegistry
from replication.task.faults import FaultReporter


@dataclass(frozen=True)
class TaskContext:
    """One task of a flow as its collaborators see it: the flow's config, the task's id, the factory of its Kafka
    clients, and where it reports its metrics and its faults.

    A part reads the fields it needs into its own attributes when it is built, so the hot path reads no further
    through the context than it read before.
    """

    flow: FlowConfig
    task_id: int
    metrics: MetricsRegistry
    clients: ClientFactory
    faults: FaultReporter

    @classmethod
    def create(
        cls,
        flow: FlowConfig,
        task_id: int = 0,
        metrics: MetricsRegistry = REGISTRY,
        clients: ClientFactory | None = None,
    ) -> TaskContext:
        """The context of task ``task_id`` of ``flow``, with its own FaultReporter."""
        return cls(flow, task_id, metrics, clients or ClientFactory(), FaultReporter(flow, task_id, metrics))

    @property
    def positions_topic(self) -> str:
        """Where the flow's tasks store their positions (in the target)."""
        return positions.positions_topic(self.flow.source.alias)
