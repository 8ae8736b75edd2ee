"""Flow API representation and validation, with replication/'s own rules (FlowConfig, is_cycle)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from controlplane.clusters.api.fields import ClusterAliasField
from controlplane.clusters.api.serializers import ClusterSerializer
from controlplane.clusters.models import Cluster
from controlplane.flows import validation
from controlplane.flows.models import Flow
from controlplane.flows.overrides import CONSUMER_OVERRIDES_ALLOWED, PRODUCER_OVERRIDES_ALLOWED, override_errors
from controlplane.flows.services import FACTS_FIELDS, FLOW_PROPERTY_FIELDS
from replication.config import MAX_INTERVALS_MS

MAX_PATTERNS = 1000
MAX_PATTERN_LENGTH = 1000
MAX_INTERVAL_SECONDS = 7 * 24 * 3600.0
MAX_TASKS = 1024


def _patterns(help_text: str) -> serializers.ListField:
    child = serializers.CharField(max_length=MAX_PATTERN_LENGTH, allow_blank=False)
    return serializers.ListField(child=child, max_length=MAX_PATTERNS, required=False, help_text=help_text)


def _overrides() -> serializers.DictField:
    return serializers.DictField(child=serializers.CharField(max_length=MAX_PATTERN_LENGTH), required=False)


class FlowSerializer(serializers.ModelSerializer[Flow]):
    source = ClusterAliasField()
    target = ClusterAliasField()
    name = serializers.CharField(read_only=True, help_text="MM2's flow name, source->target")
    topics = _patterns("topics: regular expressions of the source topics to replicate")
    topics_exclude = _patterns("topics.exclude")
    groups = _patterns("groups: regular expressions of the consumer groups to checkpoint")
    groups_exclude = _patterns("groups.exclude")
    config_properties_exclude = _patterns("config.properties.exclude: topic configs never synced")
    producer_overrides = _overrides()
    consumer_overrides = _overrides()

    class Meta:
        model = Flow
        fields = ["id", "name", "source", "target", "paused", "generation", *FLOW_PROPERTY_FIELDS, *FACTS_FIELDS]
        fields += ["created_at", "updated_at"]
        read_only_fields = ["paused", "generation"]
        validators: list[Any] = []  # the (source, target) uniqueness is checked in validate() with a clearer message
        extra_kwargs = {
            "tasks_max": {"max_value": MAX_TASKS},
            "replication_factor": {"min_value": -1, "max_value": 32767},
            "facts_lake": {"help_text": "facts.lake: directory or Hadoop URI; empty: the control plane's lake"},
            "facts_enabled": {"help_text": "write replication facts for the analytics reports"},
            **{name: {"max_value": MAX_INTERVAL_SECONDS} for name in FLOW_PROPERTY_FIELDS if name.endswith("seconds")},
            **{name: {"max_value": maximum} for name, maximum in MAX_INTERVALS_MS.items()},
        }

    def validate_source(self, source: Cluster) -> Cluster:
        return self._unchanged("source", source)

    def validate_target(self, target: Cluster) -> Cluster:
        return self._unchanged("target", target)

    def validate_topics(self, value: list[str]) -> list[str]:
        return validation.patterns("topics", value)

    def validate_topics_exclude(self, value: list[str]) -> list[str]:
        return validation.patterns("topics.exclude", value)

    def validate_groups(self, value: list[str]) -> list[str]:
        return validation.patterns("groups", value)

    def validate_groups_exclude(self, value: list[str]) -> list[str]:
        return validation.patterns("groups.exclude", value)

    def validate_config_properties_exclude(self, value: list[str]) -> list[str]:
        return validation.patterns("config.properties.exclude", value)

    def validate_facts_lake(self, value: str) -> str:
        if "\x00" in value or value != value.strip():
            raise serializers.ValidationError("a directory or URI without NUL bytes or surrounding spaces")
        return value

    def validate_producer_overrides(self, value: dict[str, str]) -> dict[str, str]:
        return _allowed(value, PRODUCER_OVERRIDES_ALLOWED)

    def validate_consumer_overrides(self, value: dict[str, str]) -> dict[str, str]:
        return _allowed(value, CONSUMER_OVERRIDES_ALLOWED)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        values = validation.merged(self.instance, attrs)
        validation.distinct_clusters(values["source"], values["target"])
        validation.first_flow_of_pair(values["source"], values["target"], self.instance)
        validation.flow_config_rules(values)
        validation.no_undetected_loop(values, self.instance)
        return attrs

    def _unchanged(self, name: str, cluster: Cluster) -> Cluster:
        if self.instance is not None and getattr(self.instance, f"{name}_id") != cluster.pk:
            raise serializers.ValidationError("cannot be changed; create a new flow instead")
        return cluster


def _allowed(overrides: dict[str, str], allowed: frozenset[str]) -> dict[str, str]:
    errors = override_errors(overrides, allowed)
    if errors:
        raise serializers.ValidationError(errors)
    return overrides


class FlowStatusSerializer(serializers.Serializer[dict[str, Any]]):
    """Per task and partition: state, replicated position, lag, latency, last error (from the orchestration)."""

    tasks = serializers.ListField(
        child=serializers.DictField(),
        help_text="per task: state, failure (DATA_LOSS: stopped until the flow is restarted; ERROR: retried; empty "
        "unless FAILED), last_error, worker, lease, placement and partitions",
    )


class PropertiesSerializer(serializers.Serializer[dict[str, Any]]):
    """A MirrorMaker 2 properties file (KIP-382), as text."""

    properties = serializers.CharField(max_length=1024 * 1024, trim_whitespace=False)


class ImportResultSerializer(serializers.Serializer[dict[str, Any]]):
    clusters = ClusterSerializer(many=True)
    flows = FlowSerializer(many=True)


class CheckpointsQuerySerializer(serializers.Serializer[dict[str, Any]]):
    group = serializers.CharField(max_length=255, required=False, allow_blank=True, help_text="only this group")


class GroupQuerySerializer(serializers.Serializer[dict[str, Any]]):
    group = serializers.CharField(max_length=255, help_text="consumer group id in the source cluster")


class CheckpointSerializer(serializers.Serializer[dict[str, Any]]):
    """MM2's Checkpoint: resume the group at downstream_offset of the remote topic."""

    consumer_group_id = serializers.CharField()
    topic = serializers.CharField(help_text="remote topic")
    partition = serializers.IntegerField()
    upstream_offset = serializers.IntegerField()
    downstream_offset = serializers.IntegerField()
    metadata = serializers.CharField(allow_blank=True)
    timestamp = serializers.IntegerField(allow_null=True)


class TranslationSerializer(serializers.Serializer[dict[str, Any]]):
    topic = serializers.CharField()
    partition = serializers.IntegerField()
    remote_topic = serializers.CharField()
    upstream_offset = serializers.IntegerField()
    downstream_offset = serializers.IntegerField()
    method = serializers.ChoiceField(choices=["sync", "timestamp"], help_text="sync: exact; timestamp: approximate")
    lag = serializers.IntegerField()
    window = serializers.CharField(allow_blank=True, help_text="what an approximate offset may re-read or skip")
    approximate = serializers.BooleanField()
