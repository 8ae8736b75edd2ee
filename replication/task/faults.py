"""FaultReporter: a task's lasting faults, reported while they last, and its data losses, reported loudly."""

from __future__ import annotations

import logging

from confluent_kafka import KafkaError

from replication.config import FlowConfig
from replication.metrics.registry import MetricsRegistry
from replication.task.dataloss import DataLossError
from replication.task.resume import ResumeMismatch

log = logging.getLogger(__name__)


class FaultReporter:
    """What is wrong with one task right now (e.g. a broker unreachable), kept in the metrics until cleared."""

    def __init__(self, flow: FlowConfig, task_id: int, metrics: MetricsRegistry) -> None:
        self.flow = flow
        self.task_id = task_id
        self.metrics = metrics
        self.current: str | None = None
        self.warning: str | None = None

    def report(self, fault: str) -> None:
        if fault != self.current:
            log.warning("%s task %d: %s", self.flow.name, self.task_id, fault)
        self.current = fault
        self.metrics.report_fault(self.flow.name, self.task_id, fault)

    def clear(self) -> None:
        if self.current is not None:
            log.info("%s task %d: recovered from: %s", self.flow.name, self.task_id, self.current)
            self.current = None
        self.metrics.clear_fault(self.flow.name, self.task_id)

    def warn(self, warning: str | None) -> None:
        """Set (logged once) or lift a warning: a configuration problem that leaves the task healthy, such as a
        topic filter that matches nothing (normal for a failback flow before the failover, so not a fault)."""
        if warning == self.warning:
            return
        if warning is not None:
            log.warning("%s task %d: %s", self.flow.name, self.task_id, warning)
        elif self.warning is not None:
            log.info("%s task %d: no longer: %s", self.flow.name, self.task_id, self.warning)
        self.warning = warning
        self.metrics.set_warning(self.flow.name, self.task_id, warning)

    def check_stall(self, stalled: float, outstanding: int, stall_seconds: float) -> None:
        """Report a target that has not acknowledged for ``stalled`` seconds, with ``outstanding`` runs in flight."""
        if stalled >= stall_seconds:
            self.report(f"target has not acknowledged for {stalled:.0f}s ({outstanding} runs in flight)")

    def source_error(self, err: KafkaError) -> None:
        """The source consumer's error callback."""
        self.report(f"source: {err.str()}")

    def data_loss(self, loss: DataLossError | None, topic: str, partition: int) -> None:
        """Count and log lost records; raise the loss when the flow says to fail on it."""
        if loss is None:
            return
        self.metrics.add_lost_records(self.flow.name, topic, partition, loss.lost, loss.reason)
        log.error("%s task %d: DATA LOSS %s", self.flow.name, self.task_id, loss)
        if self.flow.on_data_loss == "fail":
            raise loss

    def resume_mismatch(self, mismatch: ResumeMismatch) -> None:
        """A restart could not verify what the target holds: say so, and that the rest is copied again."""
        window = mismatch.window
        self.metrics.add_resume(self.flow.name, window.topic, window.partition, 0, str(mismatch))
        log.error(
            "%s task %d: RESUME MISMATCH %s; copying the records from there again (duplicates possible, no loss)",
            self.flow.name,
            self.task_id,
            mismatch,
        )
        self.report(f"resume mismatch at {window.remote_topic} [{window.partition}] offset {mismatch.at}")
