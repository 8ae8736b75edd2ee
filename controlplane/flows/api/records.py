"""A flow's records over the API: a source partition's records beside their copies in the remote topic, and where
one record's copy is. Viewers get offsets, timestamps, sizes and header names; operators and admins also keys,
values and header values, and each such read is audited (names and offsets only, never a record's bytes)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from controlplane.audit.services import record
from controlplane.core.permissions import OPERATOR, IsViewer, has_role
from controlplane.core.serializers import StrictInput
from controlplane.flows import records
from controlplane.flows.models import Flow
from controlplane.flows.recordrender import RENDERS
from controlplane.flows.records import MAX_RECORDS, RecordQuery

RECORDS_READ = "flow.read_records"
_INT64 = 2**63 - 1


class PartitionQuerySerializer(StrictInput, serializers.Serializer[dict[str, Any]]):
    topic = serializers.RegexField(
        r"^[a-zA-Z0-9._-]+$",
        max_length=249,
        help_text="a source topic the flow replicates",
        error_messages={"invalid": "not a Kafka topic name (letters, digits, '.', '_' and '-')"},
    )
    partition = serializers.IntegerField(min_value=0, max_value=2**31 - 1)


class RecordsQuerySerializer(PartitionQuerySerializer):
    offset = serializers.IntegerField(
        min_value=0, max_value=_INT64, required=False, help_text="the first source offset (default: the log start)"
    )
    timestamp = serializers.IntegerField(
        min_value=0, max_value=_INT64, required=False, help_text="from the first record at or after it (ms)"
    )
    limit = serializers.IntegerField(min_value=1, max_value=MAX_RECORDS, default=20, help_text="records to read")
    render = serializers.ChoiceField(choices=RENDERS, default="text", help_text="text, pretty JSON or hex")

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        if "offset" in data and "timestamp" in data:
            raise serializers.ValidationError({"timestamp": ["give an offset or a timestamp, not both"]})
        return data


class FindQuerySerializer(PartitionQuerySerializer):
    offset = serializers.IntegerField(min_value=0, max_value=_INT64, help_text="the source record's offset")


class RenderedSerializer(serializers.Serializer[dict[str, Any]]):
    size = serializers.IntegerField(help_text="bytes, the whole")
    format = serializers.CharField(allow_null=True, help_text="text, json or hex as shown; null: not shown")
    shown = serializers.CharField(allow_null=True, help_text="at most 4096 characters; null: the role sees sizes only")
    truncated = serializers.BooleanField(help_text="`shown` is the start of a longer rendering")


class HeaderSerializer(serializers.Serializer[dict[str, Any]]):
    name = serializers.CharField()
    value = RenderedSerializer(allow_null=True, help_text="null: a header without a value")


class RecordSideSerializer(serializers.Serializer[dict[str, Any]]):
    offset = serializers.IntegerField()
    timestamp = serializers.IntegerField(allow_null=True, help_text="ms since the epoch")
    timestamp_type = serializers.CharField(allow_null=True, help_text="CreateTime or LogAppendTime")
    key = RenderedSerializer(allow_null=True, help_text="null: a null key")
    value = RenderedSerializer(allow_null=True, help_text="null: a null value (a tombstone)")
    headers = HeaderSerializer(many=True)


class MatchSerializer(serializers.Serializer[dict[str, Any]]):
    status = serializers.CharField(
        help_text="exact, matched (by bytes in a range), range, different, not_copied, not_replicated, deleted, "
        "unknown, or no_record (find: no source record at that offset)"
    )
    target_offset = serializers.IntegerField(allow_null=True, help_text="the copy's offset in the remote topic")
    target_range = serializers.ListField(
        child=serializers.IntegerField(), allow_null=True, help_text="[first, last] offsets the copy lies in"
    )
    reason = serializers.CharField(allow_blank=True, help_text="how it is known, or why it cannot be")


class RecordRowSerializer(serializers.Serializer[dict[str, Any]]):
    # A field named "source" shadows Field.source (a str) in the stubs; DRF itself reads fields from `fields`.
    source = RecordSideSerializer()  # type: ignore[assignment]  # a field named as DRF's Field.source
    target = RecordSideSerializer(allow_null=True, help_text="the copy; null when not found")
    match = MatchSerializer()


class PartitionOffsetsSerializer(serializers.Serializer[dict[str, Any]]):
    start_offset = serializers.IntegerField()
    end_offset = serializers.IntegerField()


class RecordsSerializer(serializers.Serializer[dict[str, Any]]):
    topic = serializers.CharField()
    partition = serializers.IntegerField()
    remote_topic = serializers.CharField(help_text="its name in the target, by the flow's replication policy")
    contents = serializers.BooleanField(help_text="false: sizes and header names only (the viewer role)")
    render = serializers.CharField(allow_null=True)
    source = PartitionOffsetsSerializer()  # type: ignore[assignment]  # as RecordRowSerializer.source
    target = PartitionOffsetsSerializer(help_text="the remote partition")
    records = RecordRowSerializer(many=True)
    next_offset = serializers.IntegerField(allow_null=True, help_text="where the next page starts")


class FindSerializer(MatchSerializer):
    topic = serializers.CharField()
    partition = serializers.IntegerField()
    offset = serializers.IntegerField(help_text="the source record's offset")
    remote_topic = serializers.CharField()


class FlowRecordsViewSet(viewsets.GenericViewSet[Flow]):
    """Reads of a flow's records; each is a few bounded Kafka reads (``controlplane.flows.records``)."""

    queryset = Flow.objects.select_related("source", "target").order_by("pk")
    permission_classes = [IsViewer]

    @extend_schema(parameters=[RecordsQuerySerializer], responses=RecordsSerializer)
    @action(detail=True, methods=["get"], url_path="records")
    def records(self, request: Request, pk: str | None = None) -> Response:
        """Up to 50 source records from an offset or a timestamp, each beside its copy in the remote topic."""
        query = _query(request, RecordsQuerySerializer)
        flow = self.get_object()
        contents = has_role(request.user, OPERATOR)
        found = records.records(flow, RecordQuery(**query, contents=contents))
        if contents:
            record(request.user, RECORDS_READ, flow, after=_audited(found))
        return Response(RecordsSerializer(found).data)

    @extend_schema(parameters=[FindQuerySerializer], responses=FindSerializer)
    @action(detail=True, methods=["get"], url_path="records/find")
    def find(self, request: Request, pk: str | None = None) -> Response:
        """The target offset of one source record's copy, or why it cannot be given exactly."""
        query = _query(request, FindQuerySerializer)
        return Response(FindSerializer(records.find(self.get_object(), **query)).data)


def _query(request: Request, serializer_class: type[serializers.Serializer[dict[str, Any]]]) -> dict[str, Any]:
    serializer = serializer_class(data=request.query_params)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


def _audited(found: dict[str, Any]) -> dict[str, Any]:
    """Who read what, by names and offsets: never a key, a value or a header."""
    rows = found["records"]
    source = [row["source"]["offset"] for row in rows]
    target = [row["target"]["offset"] for row in rows if row["target"] is not None]
    return {
        "topic": found["topic"],
        "partition": found["partition"],
        "remote_topic": found["remote_topic"],
        "records": len(rows),
        "source_offsets": [min(source), max(source)] if source else None,
        "target_offsets": [min(target), max(target)] if target else None,
    }
