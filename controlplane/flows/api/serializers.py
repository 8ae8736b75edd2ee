"""Flow API representation and validation, with replication/'s own rules (FlowConfig, is_cycle).

A flow property's field takes its help text and bounds from FlowConfig's metadata (config.PROPERTIES), and a list
or map property, which the model stores as JSON, its field type too.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from rest_framework import serializers
from rest_framework.utils.model_meta import FieldInfo

from controlplane.clusters.api.fields import ClusterAliasField
from controlplane.clusters.api.serializers import ClusterSerializer
from controlplane.clusters.models import Cluster
from controlplane.core.serializers import FastListSerializer, StrictInput
from controlplane.flows import validation
from controlplane.flows.mm2diff import OUTCOMES
from controlplane.flows.models import Flow
from controlplane.flows.overrides import ALLOWED, override_errors
from controlplane.flows.services import FACTS_FIELDS, FLOW_PROPERTY_FIELDS
from controlplane.jobs.api.serializers import JobSerializer
from replication.config import PROPERTIES

MAX_PATTERNS = 1000
MAX_PATTERN_LENGTH = 1000


def _extra_kwargs(name: str) -> dict[str, Any]:
    if name not in PROPERTIES:
        return {"help_text": FACTS_FIELDS[name]}
    prop = PROPERTIES[name]
    kwargs: dict[str, Any] = {"help_text": f"{prop.name}: {FACTS_FIELDS.get(name, prop.help)}"}
    bounds = {"min_value": prop.minimum, "max_value": prop.maximum}
    return kwargs | {key: value for key, value in bounds.items() if value is not None}


class FlowSerializer(StrictInput, serializers.ModelSerializer[Flow]):
    source = ClusterAliasField()  # type: ignore[assignment]  # the API's name; a DRF field's own "source" attribute has it too
    target = ClusterAliasField()
    name = serializers.CharField(read_only=True, help_text="MM2's flow name, source->target")

    class Meta:
        model = Flow
        fields = ["id", "name", "source", "target", "paused", "generation", *FLOW_PROPERTY_FIELDS, *FACTS_FIELDS]
        fields += ["created_at", "updated_at"]
        read_only_fields = ["paused", "generation"]
        validators: list[Any] = []  # the (source, target) uniqueness is checked in validate() with a clearer message
        extra_kwargs = {name: _extra_kwargs(name) for name in (*FLOW_PROPERTY_FIELDS, *FACTS_FIELDS)}
        list_serializer_class = FastListSerializer  # a page of 100 flows: 43 fields each

    def build_field(
        self, field_name: str, info: FieldInfo, model_class: Any, nested_depth: int
    ) -> tuple[type[serializers.Field[Any, Any, Any, Any]], dict[str, Any]]:
        """A list property is a list of regexes, a map property one of librdkafka settings from an allow-list."""
        kind = PROPERTIES[field_name].kind if field_name in PROPERTIES else ""
        if kind not in ("list", "map"):
            return super().build_field(field_name, info, model_class, nested_depth)
        kwargs = {"child": serializers.CharField(max_length=MAX_PATTERN_LENGTH), "required": False}
        if kind == "map":
            return serializers.DictField, {**kwargs, "validators": [partial(_allowed, ALLOWED[field_name])]}
        check = partial(validation.patterns, PROPERTIES[field_name].name)
        return serializers.ListField, {**kwargs, "max_length": MAX_PATTERNS, "validators": [check]}

    def validate_source(self, source: Cluster) -> Cluster:
        return self._unchanged("source", source)

    def validate_target(self, target: Cluster) -> Cluster:
        return self._unchanged("target", target)

    def validate_facts_lake(self, value: str) -> str:
        if "\x00" in value or value != value.strip():
            raise serializers.ValidationError("a directory or URI without NUL bytes or surrounding spaces")
        return value

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


def _allowed(allowed: frozenset[str], overrides: dict[str, str]) -> None:
    errors = override_errors(overrides, allowed)
    if errors:
        raise serializers.ValidationError(errors)


class PropertiesSerializer(StrictInput, serializers.Serializer[dict[str, Any]]):
    """A MirrorMaker 2 properties file (KIP-382), as text."""

    properties = serializers.CharField(max_length=1024 * 1024, trim_whitespace=False)


class ImportQuerySerializer(serializers.Serializer[dict[str, Any]]):
    dry_run = serializers.BooleanField(
        required=False, default=False, help_text="only say what the import would do (200): nothing is written"
    )
    takeover = serializers.BooleanField(
        required=False,
        default=False,
        help_text="take over from a stopped MirrorMaker 2: the new flows are created paused, and a job "
        "(`takeover_job`) seeds their start positions from MM2's committed offsets, then resumes them",
    )
    expect = serializers.RegexField(
        r"^[0-9a-f]{64}$",
        required=False,
        help_text="a dry run's `digest`: apply exactly what that dry run showed, or nothing (409)",
    )


class ImportChangeSerializer(serializers.Serializer[dict[str, Any]]):
    property = serializers.CharField(help_text="as a properties file names it: bootstrap.servers, tasks.max, ...")
    old = serializers.JSONField(read_only=True, help_text="null for a new row; a credential shows as (set)")
    new = serializers.JSONField(read_only=True, help_text="a credential shows as (set) or (changed)")


class ImportItemSerializer(serializers.Serializer[Any]):
    kind = serializers.CharField(help_text="cluster or flow")
    name = serializers.CharField(help_text="the cluster's alias, or the flow's source->target")
    outcome = serializers.ChoiceField(choices=list(OUTCOMES))
    changes = ImportChangeSerializer(many=True, help_text="a new row's settings, or a changed one's differences")
    notes = serializers.ListField(child=serializers.CharField(), help_text="what the file gives and is not used")


class ImportCountsSerializer(serializers.Serializer[dict[str, int]]):
    created = serializers.IntegerField()
    changed = serializers.IntegerField()
    unchanged = serializers.IntegerField()


class ImportTotalsSerializer(serializers.Serializer[dict[str, Any]]):
    clusters = ImportCountsSerializer()
    flows = ImportCountsSerializer()


class ImportResultSerializer(serializers.Serializer[Any]):
    """What an import did, or on a dry run would do: every cluster and flow of the file, created, changed (each
    property old -> new) or unchanged."""

    dry_run = serializers.BooleanField()
    digest = serializers.CharField(help_text="send it as ?expect= to apply exactly what this answer shows")
    counts = ImportTotalsSerializer()
    items = ImportItemSerializer(many=True, help_text="the clusters, then the flows, in the file's order")
    clusters = ClusterSerializer(many=True, help_text="the file's clusters as saved; empty on a dry run")
    flows = FlowSerializer(many=True, help_text="the file's flows as saved; empty on a dry run")
    ignored = serializers.ListField(
        child=serializers.CharField(),
        help_text="each MM2 or Connect key of the file that has no effect here, with its line and the reason",
    )
    takeover_job = JobSerializer(
        allow_null=True,
        help_text="with `takeover`: the job that seeds the flows' start positions from MM2's committed offsets; "
        "its result lists, per flow and partition, MM2's committed offset and where the flow starts",
    )


class ExportQuerySerializer(StrictInput, serializers.Serializer[dict[str, Any]]):
    flows = serializers.CharField(
        required=False,
        allow_blank=False,
        help_text="comma-separated flow ids: only these flows and their clusters (default: every flow)",
    )

    def validate_flows(self, value: str) -> list[int]:
        parts = [part.strip() for part in value.split(",")]
        if not all(part.isdigit() for part in parts) or len(parts) > 1000:
            raise serializers.ValidationError("expected flow ids separated by commas, e.g. 3,7 (at most 1,000)")
        ids = sorted({int(part) for part in parts})
        missing = sorted(set(ids) - set(Flow.objects.filter(pk__in=ids).values_list("pk", flat=True)))
        if missing:
            raise serializers.ValidationError(f"no flow with id {', '.join(map(str, missing))}")
        return ids

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        # A query's empty value reads as left out to DRF; here it would export every flow instead of none.
        if "flows" in self.initial_data and "flows" not in attrs:
            raise serializers.ValidationError({"flows": ["give flow ids, e.g. 3,7, or leave the parameter out"]})
        return attrs


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
