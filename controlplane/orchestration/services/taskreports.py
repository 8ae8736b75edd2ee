"""A running task's report: its own metrics and totals on the assignment, each partition in a row of its own,
written only when it changed (``taskstatus`` describes both)."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from controlplane.orchestration.models import PartitionReport
from controlplane.orchestration.taskstatus import TaskReport, compact, totals_of
from replication.metrics.registry import FlowSnapshot, PartitionSnapshot

BATCH = 500  # rows per INSERT ... ON CONFLICT statement


class Reporter:
    """What one task has written so far, so that the next report writes only partitions whose snapshot changed.

    An idle partition's snapshot stops changing once its latency window has emptied (a minute), and from then on
    costs no write at all. The rows are keyed by flow and partition: when a partition moves to another task, that
    task's first report overwrites the row.
    """

    def __init__(self, flow_id: int, assignment_id: int, flow_name: str, task_id: int) -> None:
        self.flow_id, self.assignment_id, self.flow_name, self.task_id = flow_id, assignment_id, flow_name, task_id
        self._written: dict[tuple[str, int], list[Any]] = {}
        # The snapshot object each written row came from: the registry hands out an idle partition's snapshot again
        # as the same object, so it is known unchanged without compacting it (2,500 per task, every renewal).
        self._sources: dict[tuple[str, int], PartitionSnapshot] = {}
        self._fields: dict[str, Any] = {}
        # The flow snapshot last reported and last written: the registry hands out an idle flow's again as the same
        # object, and then neither the status (totals over every partition) nor any partition row is looked at.
        self._reported_from: FlowSnapshot | None = None
        self._written_from: FlowSnapshot | None = None

    def assignment_fields(self, metrics: FlowSnapshot, reported_partitions: list[list[str | int]]) -> dict[str, Any]:
        """What changed on the assignment since the last call: ``status`` (the task's report) and the partitions it
        reports replicating; {} when neither did (the lease renewal then writes nothing else)."""
        fields: dict[str, Any] = {"reported_partitions": reported_partitions}
        if metrics is not self._reported_from:
            fields["status"] = self._summary(metrics)
            self._reported_from = metrics
        changed = {name: value for name, value in fields.items() if self._fields.get(name) != value}
        self._fields.update(changed)
        return changed

    def _summary(self, metrics: FlowSnapshot) -> TaskReport:
        task = metrics["tasks"].get(str(self.task_id))
        summary: TaskReport = {
            "flow": self.flow_name,
            "task": self.task_id,
            "metrics": task
            if task is not None
            else {"state": "RUNNING", "error": None, "fault": None, "fault-since": None, "warning": None},
            "totals": totals_of(metrics["partitions"].values()),
        }
        return summary

    def write_partitions(self, metrics: FlowSnapshot) -> int:
        """Upsert the partitions whose snapshot changed since the last write; returns how many rows were written."""
        if metrics is self._written_from:
            return 0
        now = timezone.now()
        changed, seen = [], []
        for snapshot in metrics["partitions"].values():
            key = (snapshot["topic"], snapshot["partition"])
            if self._sources.get(key) is snapshot:
                continue
            values = compact(snapshot)
            seen.append((key, snapshot))
            if self._written.get(key) != values:
                changed.append((key, values, snapshot["replication-record-lag"], snapshot["position"]))
        rows = [
            PartitionReport(
                flow_id=self.flow_id,
                assignment_id=self.assignment_id,
                topic=topic,
                partition=partition,
                lag=lag,
                position=position,
                snapshot=values,
                updated_at=now,
            )
            for (topic, partition), values, lag, position in changed
        ]
        PartitionReport.objects.bulk_create(
            rows,
            batch_size=BATCH,
            update_conflicts=True,
            unique_fields=["flow", "topic", "partition"],
            update_fields=["assignment", "lag", "position", "snapshot", "updated_at"],
        )
        for key, values, *_ in changed:
            self._written[key] = values
        self._sources.update(seen)
        self._written_from = metrics
        return len(rows)

    def forget_others(self, owned: set[tuple[str, int]]) -> None:
        """Delete this task's rows of partitions it no longer replicates (a deleted topic, or rows of a task that
        ran these partitions before and stopped), at its start."""
        rows = PartitionReport.objects.filter(assignment_id=self.assignment_id)
        stale = [
            pk
            for pk, topic, partition in rows.values_list("pk", "topic", "partition")
            if (topic, partition) not in owned
        ]
        for i in range(0, len(stale), BATCH):
            PartitionReport.objects.filter(pk__in=stale[i : i + BATCH]).delete()
