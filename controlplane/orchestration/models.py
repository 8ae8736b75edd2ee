"""What the controller decided (assignments), who runs it (workers, leases), and what they report."""

from __future__ import annotations

from django.db import models

from controlplane.orchestration.choices import TaskFailure, TaskState


class Worker(models.Model):
    """A Celery worker that runs replication tasks; registered at start, it advertises its capacity (slots, used)
    with a heartbeat. One that stops heartbeating for a lease period counts as gone (services/capacity.py)."""

    name = models.CharField(max_length=200, unique=True)
    slots = models.PositiveIntegerField(default=4, help_text="replication tasks this worker runs at most")
    used = models.PositiveIntegerField(default=0, help_text="slots in use at the last heartbeat (live leases)")
    started_at = models.DateTimeField(auto_now_add=True)
    last_seen_at = models.DateTimeField(auto_now=True)
    stopping = models.BooleanField(default=False, help_text="set at warm shutdown: its tasks stop cleanly")

    def __str__(self) -> str:
        return self.name


class ControllerRun(models.Model):
    """The controller loop's record of itself (one row, written every tick by the thread that runs it in beat's
    process): when it started and last ticked, how many ticks ran, and how many began late, more than an interval
    after they were due (a tick that outlasted the interval delays the next)."""

    host = models.CharField(max_length=200)
    started_at = models.DateTimeField()
    ticked_at = models.DateTimeField(null=True, blank=True)
    ticks = models.PositiveBigIntegerField(default=0)
    late_ticks = models.PositiveBigIntegerField(default=0)
    longest_tick_seconds = models.FloatField(default=0.0)


class TaskAssignment(models.Model):
    """One task of a flow: the source partitions it should replicate (desired) and its lease (actual)."""

    flow = models.ForeignKey("flows.Flow", on_delete=models.CASCADE, related_name="assignments")
    task_id = models.PositiveIntegerField()
    partitions = models.JSONField(default=list, help_text="desired [[topic, partition], ...]")
    reported_partitions = models.JSONField(default=list, help_text="partitions the running task reports")
    worker = models.ForeignKey(Worker, null=True, blank=True, on_delete=models.SET_NULL, related_name="tasks")
    epoch = models.PositiveBigIntegerField(default=0, help_text="fencing epoch, +1 at every lease acquisition")
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    dispatched_at = models.DateTimeField(null=True, blank=True)
    generation = models.PositiveIntegerField(default=0, help_text="the flow generation the task runs")
    state = models.CharField(max_length=16, choices=TaskState.choices, default=TaskState.PENDING)
    last_error = models.TextField(blank=True, default="")
    failure = models.CharField(
        max_length=16,
        choices=TaskFailure.choices,
        blank=True,
        default="",
        help_text="why the task failed (DATA_LOSS: stopped until the flow is restarted); empty unless FAILED",
    )
    status = models.JSONField(default=dict, help_text="the task's own metrics and its totals (taskstatus.TaskReport)")
    release_requested = models.BooleanField(default=False)
    unplaced_reason = models.TextField(
        blank=True, default="", help_text="why the controller could not place the task on a worker; empty when placed"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["flow", "task_id"], name="unique_task_per_flow")]
        ordering = ["flow_id", "task_id"]

    def __str__(self) -> str:
        return f"{self.flow_id}/{self.task_id}"


class FlowPlan(models.Model):
    """The controller's memory of a flow: the source partitions last seen, since when it is unbalanced, and when its
    topics were provisioned (its tasks are dispatched only after the first provisioning succeeded)."""

    flow = models.OneToOneField("flows.Flow", on_delete=models.CASCADE, related_name="plan")
    partitions = models.JSONField(default=list)
    partitions_signature = models.CharField(
        max_length=64, blank=True, default="", help_text="a digest of partitions, written with them"
    )
    refreshed_at = models.DateTimeField(null=True, blank=True)
    list_failed_at = models.DateTimeField(
        null=True, blank=True, help_text="the last failed listing of the source's topics; retried after the retry delay"
    )
    imbalance_since = models.DateTimeField(null=True, blank=True)
    planned_signature = models.CharField(
        max_length=64,
        blank=True,
        default="",
        help_text="the partitions and tasks.max the stored assignments were planned for",
    )
    topics_synced_at = models.DateTimeField(null=True, blank=True, help_text="last config/ACL sync dispatched")
    last_error = models.TextField(blank=True, default="")
    provisioned_at = models.DateTimeField(
        null=True, blank=True, help_text="start of the last successful provisioning of the flow's topics"
    )
    provision_dispatched_at = models.DateTimeField(null=True, blank=True, help_text="last provisioning job queued")
    provision_error = models.TextField(blank=True, default="", help_text="why the last provisioning failed")


class PartitionReport(models.Model):
    """One source partition of a flow as the task replicating it last reported it (``taskstatus.compact``). Written
    only when its snapshot changed; the task that took the partition over overwrites it. A partition no live task
    holds (its task unplaced, stopped or paused) is written by the observer instead, from the flow's stored position
    and the source end offset (``monitoring.services.observe``)."""

    flow = models.ForeignKey("flows.Flow", on_delete=models.CASCADE, related_name="partition_reports")
    assignment = models.ForeignKey(TaskAssignment, on_delete=models.CASCADE, related_name="partition_reports")
    topic = models.CharField(max_length=255)
    partition = models.PositiveIntegerField()
    lag = models.BigIntegerField(null=True, blank=True, help_text="copied out of the snapshot to sort by it")
    position = models.BigIntegerField(
        null=True,
        blank=True,
        help_text="the next source offset to replicate, copied out of the snapshot: summed per flow for its rates",
    )
    snapshot = models.JSONField(default=list, help_text="the partition's metrics, taskstatus.compact")
    updated_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["flow", "topic", "partition"], name="unique_partition_report_per_flow")
        ]
        # Each flow's highest lags, read by the lag sampler every tick without looking at the other reports.
        indexes = [models.Index(fields=["flow", "-lag", "topic", "partition"], name="partition_report_top_lag")]
        ordering = ["flow_id", "topic", "partition"]
