"""Each failover step's result in the API, field by field. ``failover/results.py`` defines the results; a test
checks that every field there is described here, so a field added to a step without a description fails it."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from controlplane.core.fields import BoundedJSONField
from controlplane.failover.choices import Check, Step
from controlplane.failover.services.translate import CHECKPOINT, INVERSE, NONE
from replication.offsets.translation import SYNC, TIMESTAMP

METHODS = [
    (SYNC, "exact, from an offset sync"),
    (TIMESTAMP, "approximate, by timestamp"),
    (INVERSE, "exact, back through the offset syncs of the flow that made the copy"),
    (CHECKPOINT, "the group's last checkpoint (the source cannot be read)"),
    (NONE, "no position: no flow replicates the topic"),
]


class CheckResultSerializer(serializers.Serializer[Any]):
    """One check, as the wizard shows it."""

    code = serializers.CharField(help_text="the check's code, e.g. target_groups_empty (acknowledge warnings by it)")
    label = serializers.CharField(help_text="what is checked, in words")  # type: ignore[assignment]  # declared: DRF's metaclass takes it out of the class
    status = serializers.ChoiceField(
        choices=Check.choices, help_text="fail blocks the step; warn needs an acknowledgement; info and pass do not"
    )
    detail = serializers.CharField(help_text="what was found")


class RpoEstimateSerializer(serializers.Serializer[Any]):
    """Records a failover now would lose: written to the source and not replicated yet."""

    records = serializers.IntegerField(allow_null=True, help_text="the flow's lag in records; null: none reported")
    as_of = serializers.DateTimeField(
        allow_null=True, help_text="when the flow's last sample was taken (the figure when the source is down)"
    )
    latency_p99_ms = serializers.FloatField(
        allow_null=True, help_text="p99 replication latency: writes younger than that may be missing too"
    )
    note = serializers.CharField(allow_blank=True, help_text="what the figure means here, or empty")


class PartitionPlanSerializer(serializers.Serializer[Any]):
    """Where one group resumes in the target for one partition, how that was derived, and what it costs."""

    group = serializers.CharField(help_text="consumer group")
    topic = serializers.CharField(help_text="the topic the group reads in the source")
    partition = serializers.IntegerField()
    upstream_offset = serializers.IntegerField(help_text="the group's committed offset in the source")
    target_topic = serializers.CharField(help_text="the same records' topic in the target (remote topic)")
    downstream_offset = serializers.IntegerField(
        allow_null=True, help_text="the offset to commit in the target; null: none (the partition is left out)"
    )
    method = serializers.ChoiceField(choices=METHODS, help_text="how the downstream offset was derived")
    exact = serializers.BooleanField(help_text="nothing is read twice or skipped")
    note = serializers.CharField(allow_blank=True, help_text="why the plan is approximate or missing, or empty")
    reread = serializers.IntegerField(allow_null=True, help_text="records read a second time; null: unknown")
    skipped = serializers.IntegerField(allow_null=True, help_text="records never read; null: unknown")


class DrainSampleSerializer(serializers.Serializer[Any]):
    """One drain check."""

    at = serializers.FloatField(help_text="when, in seconds since the epoch")
    lag = serializers.IntegerField(allow_null=True, help_text="the groups' partitions' lag; null: not reported")
    source_end = serializers.IntegerField(
        allow_null=True, help_text="sum of the source end offsets of the groups' partitions; null: unknown"
    )


class DrainPartitionSerializer(serializers.Serializer[Any]):
    """A source partition the drain measures: one the groups committed on, within the flow's topics."""

    topic = serializers.CharField(help_text="the topic in the source")
    partition = serializers.IntegerField()
    lag = serializers.IntegerField(allow_null=True, help_text="its replication lag as last reported; null: none yet")
    source_end = serializers.IntegerField(allow_null=True, help_text="its end offset in the source; null: unknown")


class GroupOffsetSerializer(serializers.Serializer[Any]):
    """An offset for a consumer group in the target."""

    group = serializers.CharField()
    topic = serializers.CharField(help_text="the target topic")
    partition = serializers.IntegerField()
    offset = serializers.IntegerField()
    metadata = serializers.CharField(allow_blank=True, help_text="the commit's metadata (a failover writes none)")


class VerifyRowSerializer(serializers.Serializer[Any]):
    """An offset written into a target group, and what the target reads back."""

    group = serializers.CharField()
    topic = serializers.CharField(help_text="the target topic")
    partition = serializers.IntegerField()
    expected = serializers.IntegerField(help_text="the offset written (a dry run: that would be written)")
    committed = serializers.IntegerField(allow_null=True, help_text="the group's committed offset; null: none")
    match = serializers.BooleanField(help_text="committed equals expected (always true in a dry run)")


def _error() -> serializers.CharField:
    return serializers.CharField(allow_blank=True, help_text="why the step did not complete, or empty")


class PlanResultSerializer(serializers.Serializer[Any]):
    """Step 1: the failover was created from the plan."""

    created = serializers.IntegerField(help_text="the failover's id")


class PreflightResultSerializer(serializers.Serializer[Any]):
    """Step 2: the checks; the step completes when asked to proceed, nothing fails and every warning is
    acknowledged."""

    checks = CheckResultSerializer(many=True)
    failed = serializers.ListField(child=serializers.CharField(), help_text="codes of the failed checks")
    unacknowledged = serializers.ListField(
        child=serializers.CharField(), help_text="codes of the warnings not acknowledged"
    )
    rpo = RpoEstimateSerializer()


class DrainResultSerializer(serializers.Serializer[Any]):
    """Step 3 (planned only): the lag of the source partitions the groups read against the threshold, and how it is
    going. Other topics of the flow may keep being written: they are not measured."""

    lag = serializers.IntegerField(
        allow_null=True, help_text="the lag of the groups' partitions (partitions); null: not reported yet"
    )
    initial_lag = serializers.IntegerField(allow_null=True, help_text="the lag at the first check")
    threshold = serializers.IntegerField(help_text="the lag the drain waits for")
    progress = serializers.FloatField(help_text="0 to 1, drained since the first check")
    waiting = serializers.BooleanField(help_text="not done: the wizard checks again")
    trend = DrainSampleSerializer(many=True, help_text="the last checks, oldest first")
    partitions = DrainPartitionSerializer(
        many=True, help_text="the source partitions the groups committed on, within the flow's topics"
    )
    partitions_error = serializers.CharField(
        allow_blank=True, help_text="why the groups' committed partitions could not be read (the last ones are kept)"
    )
    lag_rate = serializers.FloatField(allow_null=True, help_text="lag change per second over the last minute")
    source_write_rate = serializers.FloatField(
        allow_null=True,
        help_text="the groups' partitions' end offsets' growth per second since the previous check; null: unknown",
    )
    producers_writing = serializers.BooleanField(help_text="the source end offsets moved since the previous check")
    eta_seconds = serializers.FloatField(allow_null=True, help_text="0 when done; null: the lag is not falling")
    source_error = serializers.CharField(allow_blank=True, help_text="why the source end offsets are unknown")
    why = serializers.CharField(allow_null=True, help_text="why the drain is not done, beyond time; null: no reason")
    reason = serializers.CharField(allow_blank=True, help_text="why the drain was skipped (unplanned), or empty")
    error = _error()


class FenceResultSerializer(serializers.Serializer[Any]):
    """Step 4: the source's clients stopped, as checked on the source."""

    checks = CheckResultSerializer(many=True)
    verified = serializers.BooleanField(help_text="the checks ran on the source (false: it does not answer)")
    error = _error()


class CheckpointResultSerializer(serializers.Serializer[Any]):
    """Step 5: the final checkpoint and the per-partition preview that apply writes."""

    checkpoints_written = serializers.IntegerField(help_text="partitions the final checkpoint wrote")
    source_reachable = serializers.BooleanField(help_text="false: planned from the last checkpoints instead")
    source_error = serializers.CharField(allow_blank=True, help_text="why the source does not answer, or empty")
    preview = PartitionPlanSerializer(many=True, help_text="one plan per group and partition")
    inexact = serializers.ListField(
        child=serializers.CharField(), help_text="'group topic-partition' of every plan that is not exact"
    )
    rpo = RpoEstimateSerializer()
    waiting = serializers.BooleanField(help_text="planned, and not every plan exact yet: the wizard checks again")
    precision = serializers.CharField(
        allow_blank=True,
        help_text="how exact the records translated from allow the move to be: with MirrorMaker 2's sparse offset "
        "syncs, the records per partition that may be read again; empty for a Mirrorplane flow",
    )
    error = _error()


class ApplyResultSerializer(serializers.Serializer[Any]):
    """Step 6: the previewed offsets written into the EMPTY target groups."""

    written = GroupOffsetSerializer(many=True, help_text="offsets written (or attempted, when the broker refused)")
    would_write = GroupOffsetSerializer(many=True, help_text="a dry run: what would have been written")
    dry_run = serializers.BooleanField(help_text="the write was simulated")
    backwards = serializers.ListField(
        child=serializers.CharField(), help_text="offsets that move backwards: 'group topic-partition: from -> to'"
    )
    override_backwards = serializers.BooleanField(help_text="they were written anyway, as the operator asked")
    error = _error()


class VerifyResultSerializer(serializers.Serializer[Any]):
    """Step 7: the committed offsets read back from the target, and what the operator does next."""

    rows = VerifyRowSerializer(many=True)
    checklist = serializers.ListField(child=serializers.CharField(), help_text="the consumer switch, step by step")
    dry_run = serializers.BooleanField(help_text="nothing was written: nothing to match")
    error = _error()


class FailbackResultSerializer(serializers.Serializer[Any]):
    """Step 8: the flow back (target->source), so that a later failover back is exact."""

    flow = serializers.IntegerField(allow_null=True, help_text="the flow back's id; null: none set up")
    name = serializers.CharField(allow_blank=True, help_text="the flow back's name")
    created = serializers.BooleanField(help_text="created by this step (false: it existed)")
    translation = serializers.CharField(allow_blank=True, help_text="how positions translate back")
    dry_run = serializers.BooleanField(help_text="a dry run: nothing was created")
    would_create = serializers.CharField(allow_blank=True, help_text="a dry run: the flow that would be created")
    skipped = serializers.BooleanField(help_text="the operator chose not to set it up")
    reason = serializers.CharField(allow_blank=True, help_text="why it was skipped")
    errors = BoundedJSONField(  # type: ignore[assignment]  # declared: DRF's metaclass takes it out of the class
        help_text="field errors of the refused flow back, as the flow API words them"
    )
    error = _error()


class AbortResultSerializer(serializers.Serializer[Any]):
    """The failover was aborted; nothing was undone."""

    at_step = serializers.ChoiceField(choices=Step.choices, help_text="the step it stood at")
