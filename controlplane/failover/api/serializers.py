"""Failover API: the plan (step 1) as a create request, each later step's inputs, and the failover as it stands."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema_field
from rest_framework import serializers

from controlplane.clusters.api.fields import ClusterAliasField
from controlplane.core.fields import BoundedJSONField
from controlplane.core.pagination import MAX_OFFSET
from controlplane.core.serializers import StrictInput
from controlplane.failover import steps
from controlplane.failover.api.inputs import AbortSerializer
from controlplane.failover.choices import STEP_ORDER, JobState, Mode, Status, Step
from controlplane.failover.models import Failover
from controlplane.failover.results import StepEntry
from controlplane.failover.services.machine import ACTIVE_JOB, job_busy
from controlplane.flows.models import Flow

MAX_GROUPS = 100
MAX_GROUP_LENGTH = 255


class StepEntrySerializer(serializers.Serializer[StepEntry]):
    """A step that ran: the inputs it last ran with, its result, who ran it and when."""

    by = serializers.CharField(allow_blank=True, help_text="username of who ran it last ('' if unknown)")
    at = serializers.DateTimeField(allow_null=True, help_text="when its result was stored")
    complete = serializers.BooleanField(help_text="the step completed: the failover moved on")
    attempts = serializers.IntegerField(help_text="how many times it ran (the drain runs until it completes)")
    skipped = serializers.BooleanField(help_text="skipped, not run (the drain of an unplanned failover)")


def _entry_serializer(name: str, inputs: serializers.Field[Any, Any, Any, Any]) -> type[StepEntrySerializer]:
    """``<Name>StepSerializer``: a step's entry with its own inputs and result described (one schema component each)."""
    fields = {"inputs": inputs, "result": steps.RESULT_SERIALIZERS[name]()}
    return type(f"{name.capitalize()}StepSerializer", (StepEntrySerializer,), {"__module__": __name__, **fields})


def _inputs(step: steps.WizardStep) -> serializers.Field[Any, Any, Any, Any]:
    return step.inputs() if step.takes_inputs else serializers.DictField(help_text="empty: the step takes no inputs")


ENTRY_SERIALIZERS: dict[str, type[StepEntrySerializer]] = {
    **{step.name: _entry_serializer(step.name, _inputs(step)) for step in steps.STEPS},
    "abort": _entry_serializer("abort", AbortSerializer()),
}


class StepsSerializer(serializers.Serializer[dict[str, StepEntry]]):
    """Every step that ran (or was skipped), by name; a step that has not run is absent."""

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        described: dict[str, serializers.Field[Any, Any, Any, Any]] = {
            step.name: ENTRY_SERIALIZERS[step.name](required=False) for step in steps.STEPS
        }
        aborted = ENTRY_SERIALIZERS["abort"](required=False, help_text="present once the failover was aborted")
        return {**described, "abort": aborted}


class StepperRowSerializer(serializers.Serializer[dict[str, str]]):
    """One step of the wizard's stepper."""

    step = serializers.ChoiceField(choices=Step.choices)
    label = serializers.CharField()  # type: ignore[assignment]  # declared: DRF's metaclass takes it out of the class
    state = serializers.ChoiceField(choices=["done", "current", "skipped", "todo"])


# What a step's job stores: the result of the step it ran (steps.<step>.result describes each one).
JOB_RESULT = PolymorphicProxySerializer(
    component_name="StepJobResult",
    serializers=[step.result_serializer for step in steps.JOBS],
    resource_type_field_name=None,
    allow_null=True,
)


class StepJobSerializer(serializers.Serializer[Failover]):
    """The background job of the last step started: poll the failover until ``state`` is succeeded or failed."""

    step = serializers.CharField(source="job_step", help_text="the step the job runs ('' before any)")
    state = serializers.ChoiceField(
        source="job_state", choices=JobState.choices, help_text="idle, queued, running, succeeded or failed"
    )
    by = serializers.SerializerMethodField(help_text="username of who started it (null if unknown)")
    inputs = BoundedJSONField(source="job_inputs", help_text="the inputs the step runs with")
    queued_at = serializers.DateTimeField(source="job_queued_at", allow_null=True)
    started_at = serializers.DateTimeField(
        source="job_started_at", allow_null=True, help_text="when a worker started it (null while queued)"
    )
    finished_at = serializers.DateTimeField(source="job_finished_at", allow_null=True)
    expires_at = serializers.DateTimeField(
        source="job_expires_at",
        allow_null=True,
        help_text="a queued or running job not finished by then is presumed dead (its worker was killed): the step "
        "can be started again, and a late result of the old job is discarded",
    )
    expired = serializers.SerializerMethodField(help_text="queued or running, but past expires_at")
    error = serializers.CharField(source="job_error", help_text="why the job failed ('' unless state is failed)")
    result = serializers.SerializerMethodField(
        help_text="the step's stored result once the job succeeded (also under steps.<step>.result), else null"
    )

    def get_by(self, failover: Failover) -> str | None:
        return failover.job_by.get_username() if failover.job_by is not None else None

    def get_expired(self, failover: Failover) -> bool:
        return failover.job_state in ACTIVE_JOB and not job_busy(failover)

    @extend_schema_field(JOB_RESULT)
    def get_result(self, failover: Failover) -> dict[str, Any] | None:
        entry = failover.entry(failover.job_step) if failover.job_state == JobState.SUCCEEDED else None
        if entry is None:
            return None
        return dict(steps.RESULT_SERIALIZERS[failover.job_step](entry.result).data)


class FailoverSerializer(StrictInput, serializers.ModelSerializer[Failover]):
    source = ClusterAliasField()  # type: ignore[assignment]  # declared: DRF's metaclass takes it out of the class
    target = ClusterAliasField()
    groups = serializers.ListField(
        child=serializers.CharField(max_length=MAX_GROUP_LENGTH), min_length=1, max_length=MAX_GROUPS
    )
    created_by = serializers.SlugRelatedField[AbstractBaseUser](slug_field="username", read_only=True)
    steps = StepsSerializer(source="entries", read_only=True, help_text="each step's inputs and result")
    stepper = serializers.SerializerMethodField(help_text="every step with done, current, skipped or todo")
    job = StepJobSerializer(source="*", read_only=True, help_text="the background job of the last step started")

    class Meta:
        model = Failover
        fields = [
            "id",
            "mode",
            "source",
            "target",
            "groups",
            "dry_run",
            "drain_threshold",
            "step",
            "status",
            "steps",
            "stepper",
            "job",
            "created_by",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["step", "status", "created_by", "created_at", "updated_at"]

    @extend_schema_field(StepperRowSerializer(many=True))
    def get_stepper(self, failover: Failover) -> list[dict[str, str]]:
        current = STEP_ORDER.index(Step(failover.step))
        entries = failover.entries
        rows = []
        for step in steps.STEPS:
            index = STEP_ORDER.index(step.step)
            if step.name in entries and entries[step.name].skipped:
                state = "skipped"
            elif index < current or failover.status == Status.COMPLETED:
                state = "done"
            else:
                state = "current" if index == current else "todo"
            rows.append({"step": step.name, "label": step.label, "state": state})
        return rows

    def validate_groups(self, groups: list[str]) -> list[str]:
        cleaned = [g.strip() for g in groups]
        if any(not g for g in cleaned):
            raise serializers.ValidationError("a consumer group id cannot be blank")
        if len(set(cleaned)) != len(cleaned):
            raise serializers.ValidationError("each group once")
        return cleaned

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        source, target, mode = attrs["source"], attrs["target"], attrs["mode"]
        if source.pk == target.pk:
            raise serializers.ValidationError({"target": ["choose a cluster other than the source"]})
        needed = (target, source) if mode == Mode.FAILBACK else (source, target)
        if not Flow.objects.filter(source=needed[0], target=needed[1]).exists():
            why = "whose copies the groups read" if mode == Mode.FAILBACK else "that replicates what the groups read"
            raise serializers.ValidationError({"target": [f"no flow {needed[0]}->{needed[1]} {why}"]})
        busy = _groups_in_flight(attrs["groups"])
        if busy:
            raise serializers.ValidationError({"groups": [f"already moving in an active failover: {', '.join(busy)}"]})
        return attrs


def _groups_in_flight(groups: list[str]) -> list[str]:
    active = Failover.objects.filter(status=Status.ACTIVE).values_list("groups", flat=True)
    moving = {g for listed in active for g in listed}
    return sorted(set(groups) & moving)


class DrainThresholdSerializer(StrictInput, serializers.Serializer[dict[str, Any]]):
    drain_threshold = serializers.IntegerField(
        min_value=0, max_value=2**31 - 1, help_text="records of flow lag the drain waits for"
    )


class BusySerializer(serializers.Serializer[dict[str, Any]]):
    """409: a job of this failover is queued or running, or the failover is not at the step asked for (``detail``
    says where it is); ``job`` is the state of its last step's job."""

    detail = serializers.CharField()
    job = StepJobSerializer()


class GroupPickerQuerySerializer(serializers.Serializer[dict[str, Any]]):
    """Which flow's groups: the plan's source and target (the flow source->target), and which page of them."""

    source = ClusterAliasField(help_text="source cluster alias")  # type: ignore[assignment]  # declared: DRF's metaclass takes it out of the class
    target = ClusterAliasField(help_text="target cluster alias")
    search = serializers.CharField(
        required=False, default="", allow_blank=True, max_length=MAX_GROUP_LENGTH, help_text="a part of the group id"
    )
    limit = serializers.IntegerField(min_value=1, max_value=200, default=50, help_text="rows per page")
    offset = serializers.IntegerField(min_value=0, max_value=MAX_OFFSET, default=0, help_text="rows to skip")

    def validate_search(self, search: str) -> str:
        if "\x00" in search:  # librdkafka takes C strings
            raise serializers.ValidationError("NUL bytes are not allowed.")
        return search

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        source, target = attrs["source"], attrs["target"]
        if source.pk == target.pk:
            raise serializers.ValidationError({"target": ["choose a cluster other than the source"]})
        flow = Flow.objects.select_related("source", "target").filter(source=source, target=target).first()
        if flow is None:
            raise serializers.ValidationError({"target": [f"no flow {source}->{target} replicates the groups' topics"]})
        return {**attrs, "flow": flow}


class PickedGroupSerializer(serializers.Serializer[dict[str, Any]]):
    group = serializers.CharField(help_text="group.id")
    state = serializers.CharField(help_text="STABLE, EMPTY, PREPARING_REBALANCE, COMPLETING_REBALANCE, DEAD or UNKNOWN")
    members = serializers.IntegerField(help_text="member count")
    topics = serializers.ListField(child=serializers.CharField(), help_text="replicated topics it committed offsets in")
    partitions = serializers.IntegerField(help_text="partitions of those topics with a committed offset")
    lag = serializers.IntegerField(
        allow_null=True, help_text="end minus committed offsets, summed; null: a partition's end did not answer"
    )
    in_groups_filter = serializers.BooleanField(
        help_text="the flow's groups filter selects it (else it has no checkpoints and the pre-flight refuses it)"
    )
    checkpoint_timestamp = serializers.IntegerField(
        allow_null=True, help_text="ms, the newest checkpoint of the group on the target; null: none seen yet"
    )
    checkpoint_age_seconds = serializers.FloatField(allow_null=True, help_text="now minus checkpoint_timestamp")
    checkpoint_partitions = serializers.IntegerField(help_text="partitions with a checkpoint")


class GroupPickerPageSerializer(serializers.Serializer[dict[str, Any]]):
    count = serializers.IntegerField(help_text="groups of the scanned ones that committed in replicated topics")
    scanned = serializers.IntegerField(help_text="groups whose id contains `search` whose offsets were read")
    truncated = serializers.BooleanField(help_text="more groups contain `search` than were scanned: narrow it")
    checkpoints_read_at = serializers.DateTimeField(
        allow_null=True, help_text="when the sampler last read the flow's checkpoints; null: never"
    )
    checkpoints_error = serializers.CharField(allow_blank=True, help_text="why they were not read, if so")
    results = PickedGroupSerializer(many=True, help_text="the page, by group id")
