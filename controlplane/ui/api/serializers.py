"""Representations of the UI's own endpoints: the flow time series, checkpoint freshness and the topic preview."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from controlplane.clusters.api.fields import ClusterAliasField
from controlplane.flows import validation
from controlplane.flows.choices import ReplicationPolicyClass
from controlplane.flows.defaults import default_topics, default_topics_exclude, flow_default
from controlplane.flows.models import Flow
from controlplane.ui.models import FlowSample

MAX_PATTERNS = 1000
MAX_PATTERN_LENGTH = 1000


class FlowSampleSerializer(serializers.ModelSerializer[FlowSample]):
    class Meta:
        model = FlowSample
        fields = ["at", "records", "records_per_second", "lag", "latency_p99_ms", "health"]


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
