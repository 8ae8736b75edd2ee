"""The flow status in the API, field by field (``orchestration/taskstatus.py`` defines it; a test checks that every
field there is described here, so a field added to the status without a description fails it)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from controlplane.core.fields import BoundedJSONField
from controlplane.core.pagination import MAX_OFFSET
from controlplane.orchestration.choices import TaskFailure, TaskState

PLACEMENTS = [
    ("running", "a worker runs it (live lease)"),
    ("unplaced", "no live worker has a free slot: see unplaced_reason"),
    ("dispatched", "on its way to a worker"),
    ("idle", "no partitions: nothing to run until a rebalance gives it some (see idle_reason)"),
    ("waiting", "not dispatched: paused, failed and waiting to retry, or the flow's topics not provisioned yet"),
]


def _topic_partitions(help_text: str) -> serializers.ListField:
    pair = serializers.ListField(child=BoundedJSONField(), min_length=2, max_length=2)
    return serializers.ListField(child=pair, help_text=f"{help_text}, as [[topic, partition], ...]")


class PartitionStatusSerializer(serializers.Serializer[Any]):
    """One source partition as its task last reported it (every few seconds, with its lease renewal), or, while no
    live task holds it, as the observer read it: every desired partition of the flow is listed."""

    topic = serializers.CharField(help_text="source topic")
    partition = serializers.IntegerField()
    task_id = serializers.IntegerField(allow_null=True, help_text="the task that reported it, or is to replicate it")
    task_state = serializers.ChoiceField(
        choices=["running", "unplaced", "stopped"],
        help_text="running: its task holds a live lease and reports it; unplaced (no worker has room for the task) or "
        "stopped (paused, failed, between leases): position and lag are the observer's, from the flow's stored "
        "position and the source end offset",
    )
    position = serializers.IntegerField(allow_null=True, help_text="next source offset to replicate; null: not yet")
    lag = serializers.IntegerField(
        allow_null=True, help_text="source end offset minus the replicated position; null: not yet known"
    )
    latency_p50_ms = serializers.FloatField(
        allow_null=True, help_text="median source-timestamp-to-target-ack latency over the last window; null: idle"
    )
    latency_p99_ms = serializers.FloatField(allow_null=True, help_text="p99 of the same; null: idle")
    record_count = serializers.IntegerField(help_text="records replicated since the task started")
    byte_count = serializers.IntegerField(help_text="bytes replicated since the task started")
    lost_records = serializers.IntegerField(
        help_text="records that can no longer be replicated (a retention gap, a recreated topic)"
    )
    last_loss_reason = serializers.CharField(allow_null=True, help_text="why records were last lost; null: never")
    resume_skipped = serializers.IntegerField(
        help_text="records found already on the target when the task started, so not sent again (exact resume)"
    )
    resume_mismatches = serializers.IntegerField(
        help_text="starts whose records on the target could not all be verified; the rest was copied again"
    )
    last_resume_mismatch = serializers.CharField(
        allow_null=True, help_text="what the last unverifiable start found (offset, difference, likely cause)"
    )


class MismatchSerializer(serializers.Serializer[Any]):
    """Desired versus actual assignment (uReplicator's validation)."""

    missing = _topic_partitions("desired partitions the task does not report replicating (the first 20)")
    unexpected = _topic_partitions("partitions the task reports and is not assigned (the first 20)")
    missing_count = serializers.IntegerField(help_text="how many are missing")
    unexpected_count = serializers.IntegerField(help_text="how many are unexpected")


class TaskStatusSerializer(serializers.Serializer[Any]):
    """One task of the flow: its state and why, where it runs, and the partitions it reports."""

    task_id = serializers.IntegerField()
    state = serializers.ChoiceField(choices=TaskState.choices)
    failure = serializers.ChoiceField(
        choices=TaskFailure.choices,
        allow_blank=True,
        help_text="why a FAILED task stopped: DATA_LOSS stays stopped until the flow is restarted (which accepts "
        "the loss), ERROR is retried; empty unless FAILED",
    )
    worker = serializers.CharField(allow_null=True, help_text="the worker holding its lease; null: none")
    live = serializers.BooleanField(help_text="its lease is held and not expired")
    epoch = serializers.IntegerField(help_text="fencing epoch, +1 at every lease acquisition")
    lease_expires_at = serializers.DateTimeField(allow_null=True)
    last_error = serializers.CharField(allow_blank=True, help_text="why it last failed, as the worker reported it")
    placement = serializers.ChoiceField(choices=PLACEMENTS)
    unplaced_reason = serializers.CharField(allow_blank=True, help_text="why no worker runs it; empty when placed")
    idle_reason = serializers.CharField(allow_blank=True, help_text="why it has no partitions; empty when it has")
    fault = serializers.CharField(
        allow_null=True, help_text="a lasting condition the running task reports (a broker unreachable); null: none"
    )
    warning = serializers.CharField(
        allow_null=True,
        help_text="a configuration problem that leaves the task healthy, e.g. its topic filter matches no source "
        "topic (normal for a failback flow before its failover); null: none",
    )
    desired_count = serializers.IntegerField(help_text="partitions the controller assigned it")
    reported_count = serializers.IntegerField(help_text="partitions it reports replicating")
    mismatch = MismatchSerializer()
    partition_count = serializers.IntegerField(help_text="partitions it reports (listed in the flow's `partitions`)")
    records = serializers.IntegerField(help_text="records its partitions replicated since it started")
    lag = serializers.IntegerField(allow_null=True, help_text="its partitions' lag summed; null: none known yet")
    latency_p99_ms = serializers.FloatField(allow_null=True, help_text="the highest p99 of its partitions; null: idle")
    lost_records = serializers.IntegerField(help_text="records its partitions could no longer replicate")


class PartitionPageSerializer(serializers.Serializer[Any]):
    """One page of the flow's partitions (query parameters `limit`, `offset`, `topic`, `order`)."""

    count = serializers.IntegerField(help_text="partitions matching the topic filter")
    offset = serializers.IntegerField()
    limit = serializers.IntegerField()
    topic = serializers.CharField(allow_blank=True, help_text="the topic filter: a part of the name; empty: all")
    order = serializers.ChoiceField(choices=[("partition", "by topic and partition"), ("-lag", "highest lag first")])
    results = PartitionStatusSerializer(many=True, help_text="the page's partitions, with their metrics")


class PartitionQuerySerializer(serializers.Serializer[Any]):
    """Which page of the flow's partitions the status includes."""

    limit = serializers.IntegerField(min_value=0, max_value=1000, default=100, help_text="partitions per page")
    offset = serializers.IntegerField(min_value=0, max_value=MAX_OFFSET, default=0)
    topic = serializers.CharField(required=False, default="", allow_blank=True, max_length=255)
    order = serializers.ChoiceField(choices=["partition", "-lag"], default="partition")


class ProvisioningSerializer(serializers.Serializer[Any]):
    """Whether the flow's topics were provisioned (its tasks start only after that), and why it last failed."""

    provisioned = serializers.BooleanField()
    provisioned_at = serializers.DateTimeField(allow_null=True, help_text="start of the last successful provisioning")
    error = serializers.CharField(allow_blank=True, help_text="why the last provisioning failed (it is retried)")


class FlowStatusSerializer(serializers.Serializer[Any]):
    """A flow's tasks as the orchestration runs them: per task and partition, state, replicated position, lag,
    latency and last error."""

    flow = serializers.IntegerField(help_text="the flow's id")
    name = serializers.CharField(help_text="the flow's name, source->target")
    enabled = serializers.BooleanField()
    paused = serializers.BooleanField()
    generation = serializers.IntegerField(help_text="+1 at every restart; tasks of an older generation stop")
    controller_error = serializers.CharField(allow_blank=True, help_text="why the controller's last tick failed")
    provisioning = ProvisioningSerializer()
    rebalance_due_at = serializers.DateTimeField(
        allow_null=True, help_text="when the controller evens out an imbalance (delayed rebalance); null: none due"
    )
    tasks = TaskStatusSerializer(many=True)
    unplaced = serializers.IntegerField(help_text="tasks no live worker has a free slot for")
    partitions = PartitionPageSerializer(help_text="a page of the partitions its tasks report")
