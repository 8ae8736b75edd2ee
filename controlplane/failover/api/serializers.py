"""Failover API: the plan (step 1) as a create request, each later step's inputs, and the failover as it stands."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from controlplane.clusters.api.fields import ClusterAliasField
from controlplane.failover.choices import STEP_ORDER, Mode, Status, Step
from controlplane.failover.models import Failover
from controlplane.flows.models import Flow

MAX_GROUPS = 100
MAX_GROUP_LENGTH = 255


class FailoverSerializer(serializers.ModelSerializer[Failover]):
    source = ClusterAliasField()
    target = ClusterAliasField()
    groups = serializers.ListField(
        child=serializers.CharField(max_length=MAX_GROUP_LENGTH), min_length=1, max_length=MAX_GROUPS
    )
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    stepper = serializers.SerializerMethodField(help_text="every step with done, current, skipped or todo")

    class Meta:
        model = Failover
        fields = ["id", "mode", "source", "target", "groups", "dry_run", "drain_threshold", "step", "status",
                  "steps", "stepper", "created_by", "created_at", "updated_at"]  # fmt: skip
        read_only_fields = ["step", "status", "steps", "created_by", "created_at", "updated_at"]

    def get_stepper(self, failover: Failover) -> list[dict[str, str]]:
        current = STEP_ORDER.index(Step(failover.step))
        rows = []
        for index, step in enumerate(STEP_ORDER[:-1]):
            if (failover.steps.get(step) or {}).get("skipped"):
                state = "skipped"
            elif index < current or failover.status == Status.COMPLETED:
                state = "done"
            else:
                state = "current" if index == current else "todo"
            rows.append({"step": step, "label": step.label, "state": state})
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


class PreflightSerializer(serializers.Serializer[dict[str, Any]]):
    proceed = serializers.BooleanField(default=False, help_text="move on if nothing fails and warnings are acked")
    acknowledge = serializers.ListField(child=serializers.CharField(max_length=64), required=False, default=list,
                                        help_text="codes of the warnings the operator accepts")  # fmt: skip


class FenceSerializer(serializers.Serializer[dict[str, Any]]):
    confirmed = serializers.BooleanField(help_text="producers and consumers on the source have stopped")


class ApplySerializer(serializers.Serializer[dict[str, Any]]):
    override_backwards = serializers.BooleanField(default=False, help_text="allow moving a committed offset back")


class FailbackSerializer(serializers.Serializer[dict[str, Any]]):
    set_up = serializers.BooleanField(default=True, help_text="create the flow back (target->source) if missing")


class AbortSerializer(serializers.Serializer[dict[str, Any]]):
    reason = serializers.CharField(max_length=500, required=False, default="", allow_blank=True)


class EmptySerializer(serializers.Serializer[dict[str, Any]]):
    """No inputs."""
