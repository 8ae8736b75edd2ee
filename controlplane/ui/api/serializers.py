"""Representations of the UI's own endpoints: the flow's reports and the topic preview."""

from __future__ import annotations

import copy
from typing import Any

from rest_framework import serializers

from controlplane.core.fields import BoundedJSONField
from controlplane.flows import validation
from controlplane.flows.api.serializers import FlowSerializer
from controlplane.flows.defaults import flow_default
from controlplane.flows.models import Flow
from controlplane.ui.services.flowreports import MAX_ROWS as MAX_REPORT_ROWS
from controlplane.ui.services.flowreports import MAX_SERIES as MAX_REPORT_SERIES

PREVIEW_FIELDS = ["topics", "topics_exclude", "replication_policy_class", "replication_policy_separator"]


class PreviewSerializer(FlowSerializer):
    """The flow form's current values, as far as the preview needs them; ``flow`` is the flow being edited.

    A cut of the flow's own serializer, so a property is validated (and documented) here as a flow's is."""

    flow = serializers.PrimaryKeyRelatedField(queryset=Flow.objects.all(), required=False, allow_null=True)

    class Meta(FlowSerializer.Meta):
        fields = ["flow", "source", "target", *PREVIEW_FIELDS]
        read_only_fields: list[str] = []

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        validation.distinct_clusters(attrs["source"], attrs["target"])
        return {name: copy.deepcopy(flow_default(name)) for name in PREVIEW_FIELDS} | attrs


class FlowReportSerializer(serializers.Serializer[dict[str, Any]]):
    """The newest summary of one analytics job, cut down to what mentions the flow."""

    job = serializers.CharField(help_text="latency, topology or audit")
    written_at = serializers.DateTimeField(help_text="when the summary was written")
    since = serializers.DateTimeField(allow_null=True, help_text="start of the window the job read; null: open")
    until = serializers.DateTimeField(allow_null=True, help_text="end of the window the job read; null: open")
    no_data = serializers.BooleanField(help_text="the window held no facts")
    note = serializers.CharField(allow_blank=True, help_text="the job's remark, or empty")
    figures = serializers.DictField(child=BoundedJSONField(), help_text="whole-lake figures (facts, records...)")
    flagged_in = serializers.ListField(child=serializers.CharField(), help_text="sections that list the flow")
    rows = serializers.ListField(
        child=serializers.DictField(child=BoundedJSONField()),
        help_text=f"the summary's rows about the flow (at most {MAX_REPORT_ROWS}), each with its `section`",
    )
    series = serializers.ListField(
        child=serializers.DictField(child=BoundedJSONField()),
        help_text=f"the flow's rows per window (latency per path and bucket `at`, audit per `window_start`), oldest "
        f"first, at most the newest {MAX_REPORT_SERIES}",
    )
    graph = serializers.DictField(
        child=BoundedJSONField(),
        allow_null=True,
        help_text="topology only: `nodes` (cluster aliases) and `links` (source, target, flow, dead...); else null",
    )


class FlowReportsSerializer(serializers.Serializer[dict[str, Any]]):
    """The latest analytics reports that mention a flow; empty when none were run."""

    flow = serializers.IntegerField(help_text="the flow's id")
    reports = FlowReportSerializer(many=True, help_text="one per job, by job name")
