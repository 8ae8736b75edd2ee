"""What each failover step's request takes (and, for the plan, what the failover was created with). The step table
(``failover/steps.py``) names each step's inputs; the API validates a step's request with them and describes the
inputs stored with its entry."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from controlplane.core.serializers import StrictInput
from controlplane.failover.choices import Mode


class PreflightSerializer(StrictInput, serializers.Serializer[dict[str, Any]]):
    proceed = serializers.BooleanField(default=False, help_text="move on if nothing fails and warnings are acked")
    acknowledge = serializers.ListField(
        child=serializers.CharField(max_length=64),
        required=False,
        default=list,
        help_text="codes of the warnings the operator accepts",
    )


class FenceSerializer(StrictInput, serializers.Serializer[dict[str, Any]]):
    confirmed = serializers.BooleanField(help_text="producers and consumers on the source have stopped")


class ApplySerializer(StrictInput, serializers.Serializer[dict[str, Any]]):
    override_backwards = serializers.BooleanField(default=False, help_text="allow moving a committed offset back")


class FailbackSerializer(StrictInput, serializers.Serializer[dict[str, Any]]):
    set_up = serializers.BooleanField(default=True, help_text="create the flow back (target->source) if missing")


class AbortSerializer(StrictInput, serializers.Serializer[dict[str, Any]]):
    reason = serializers.CharField(max_length=500, required=False, default="", allow_blank=True)


class PlanInputsSerializer(serializers.Serializer[dict[str, Any]]):
    """The plan, as validated when the failover was created."""

    mode = serializers.ChoiceField(choices=Mode.choices)
    source = serializers.CharField(help_text="source cluster alias")  # type: ignore[assignment]  # declared: DRF's metaclass takes it out of the class
    target = serializers.CharField(help_text="target cluster alias")
    groups = serializers.ListField(child=serializers.CharField(), help_text="consumer group ids to move")
    dry_run = serializers.BooleanField()
    drain_threshold = serializers.IntegerField(help_text="records of flow lag the drain waits for")
