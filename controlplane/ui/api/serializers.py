"""Representations of the UI's own endpoints: the flow's reports and the topic preview."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from controlplane.clusters.api.fields import ClusterAliasField
from controlplane.flows import validation
from controlplane.flows.choices import ReplicationPolicyClass
from controlplane.flows.defaults import default_topics, default_topics_exclude, flow_default
from controlplane.flows.models import Flow
from controlplane.ui.services.reports import MAX_ROWS as MAX_REPORT_ROWS

MAX_PATTERNS = 1000
MAX_PATTERN_LENGTH = 1000


def _patterns(default: Any) -> serializers.ListField:
    child = serializers.CharField(max_length=MAX_PATTERN_LENGTH, allow_blank=False)
    return serializers.ListField(child=child, max_length=MAX_PATTERNS, required=False, default=default)


class PreviewSerializer(serializers.Serializer[dict[str, Any]]):
    """The flow form's current values, as far as the preview needs them; ``flow`` is the flow being edited."""

    flow = serializers.PrimaryKeyRelatedField(queryset=Flow.objects.all(), required=False, allow_null=True)
    source = ClusterAliasField()
    target = ClusterAliasField()
    topics = _patterns(default_topics)
    topics_exclude = _patterns(default_topics_exclude)
    replication_policy_class = serializers.ChoiceField(
        choices=ReplicationPolicyClass.choices, default=ReplicationPolicyClass.DEFAULT
    )
    replication_policy_separator = serializers.CharField(
        max_length=16, default=flow_default("replication_policy_separator"), trim_whitespace=False
    )

    def validate_topics(self, value: list[str]) -> list[str]:
        return validation.patterns("topics", value)

    def validate_topics_exclude(self, value: list[str]) -> list[str]:
        return validation.patterns("topics.exclude", value)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        validation.distinct_clusters(attrs["source"], attrs["target"])
        return attrs


class FlowReportSerializer(serializers.Serializer[dict[str, Any]]):
    """The newest summary of one analytics job, cut down to what mentions the flow."""

    job = serializers.CharField(help_text="latency, topology or audit")
    written_at = serializers.DateTimeField(help_text="when the summary was written")
    since = serializers.DateTimeField(allow_null=True, help_text="start of the window the job read; null: open")
    until = serializers.DateTimeField(allow_null=True, help_text="end of the window the job read; null: open")
    no_data = serializers.BooleanField(help_text="the window held no facts")
    note = serializers.CharField(allow_blank=True, help_text="the job's remark, or empty")
    figures = serializers.DictField(child=serializers.JSONField(), help_text="whole-lake figures (facts, records...)")
    flagged_in = serializers.ListField(child=serializers.CharField(), help_text="sections that list the flow")
    rows = serializers.ListField(
        child=serializers.DictField(child=serializers.JSONField()),
        help_text=f"the summary's rows about the flow (at most {MAX_REPORT_ROWS}), each with its `section`",
    )


class FlowReportsSerializer(serializers.Serializer[dict[str, Any]]):
    """The latest analytics reports that mention a flow; empty when none were run."""

    flow = serializers.IntegerField(help_text="the flow's id")
    reports = FlowReportSerializer(many=True, help_text="one per job, by job name")
