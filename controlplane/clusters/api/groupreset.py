"""Resetting a consumer group's offsets over the API: a preview any role may ask for, and the apply, for operators
and admins, which writes exactly the previewed offsets (``controlplane.clusters.groupreset``)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from controlplane.clusters import groupreset
from controlplane.clusters.groupreset import ResetSpec
from controlplane.clusters.models import Cluster
from controlplane.core.permissions import HasRole
from controlplane.core.serializers import StrictInput

MAX_TOPIC = 249  # Kafka's longest topic name


class GroupResetSpecSerializer(StrictInput, serializers.Serializer[dict[str, Any]]):
    to = serializers.ChoiceField(
        choices=[
            (groupreset.EARLIEST, "each partition's log start offset"),
            (groupreset.LATEST, "each partition's end offset: skip everything not read yet"),
            (groupreset.TIMESTAMP, "the first record at or after `timestamp`, or the end offset if none is"),
            (groupreset.OFFSET, "`offset` on each partition"),
        ]
    )
    timestamp = serializers.DateTimeField(
        required=False, help_text="with to=timestamp: ISO 8601, 24-hour; UTC unless it names an offset"
    )
    offset = serializers.IntegerField(required=False, min_value=0, help_text="with to=offset")
    topic = serializers.CharField(
        required=False,
        max_length=MAX_TOPIC,
        help_text="every partition of this topic; omitted: every partition the group has committed an offset for",
    )
    partition = serializers.IntegerField(required=False, min_value=0, help_text="only this partition of `topic`")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        to = attrs["to"]
        errors: dict[str, list[str]] = {}
        for name in (groupreset.TIMESTAMP, groupreset.OFFSET):
            if to == name and name not in attrs:
                errors[name] = [f"Required when `to` is {name}."]
            if to != name and name in attrs:
                errors[name] = [f"Only with `to` {name}, not {to}."]
        if "partition" in attrs and "topic" not in attrs:
            errors["partition"] = ["A partition needs its `topic`."]
        if errors:
            raise ValidationError(errors)
        return attrs

    def spec(self) -> ResetSpec:
        data = self.validated_data
        moment = data.get("timestamp")
        return ResetSpec(
            to=data["to"],
            timestamp_ms=groupreset.to_millis(moment) if moment is not None else None,
            offset=data.get("offset"),
            topic=data.get("topic"),
            partition=data.get("partition"),
        )


class GroupResetApplySerializer(GroupResetSpecSerializer):
    preview = serializers.CharField(help_text="the `preview` of the preview's answer: what it showed is written")


class GroupResetPartitionSerializer(serializers.Serializer[Any]):
    topic = serializers.CharField()
    partition = serializers.IntegerField()
    current_offset = serializers.IntegerField(allow_null=True, help_text="committed now; null: nothing committed")
    new_offset = serializers.IntegerField(help_text="the offset it would be reset to")
    reread = serializers.IntegerField(help_text="records read again: current minus new, when new is before current")
    skipped = serializers.IntegerField(help_text="records skipped: new minus current, when new is after current")
    log_start = serializers.IntegerField(help_text="the partition's log start offset")
    log_end = serializers.IntegerField(help_text="the partition's end offset (high watermark)")


class GroupResetPreviewSerializer(serializers.Serializer[dict[str, Any]]):
    group = serializers.CharField()
    state = serializers.CharField(help_text="EMPTY, or DEAD for a group not known yet")
    partitions = GroupResetPartitionSerializer(many=True, help_text="by topic and partition")
    reread = serializers.IntegerField(help_text="records read again, every partition")
    skipped = serializers.IntegerField(help_text="records skipped, every partition")
    preview = serializers.CharField(help_text="send it with the apply; valid for 10 minutes")


class GroupResetWrittenSerializer(serializers.Serializer[dict[str, Any]]):
    topic = serializers.CharField()
    partition = serializers.IntegerField()
    old_offset = serializers.IntegerField(allow_null=True)
    new_offset = serializers.IntegerField()


class GroupResetSerializer(serializers.Serializer[dict[str, Any]]):
    group = serializers.CharField()
    partitions = GroupResetWrittenSerializer(many=True)


_GROUP = OpenApiParameter("group", OpenApiTypes.STR, OpenApiParameter.PATH, description="group.id")
_REFUSED = {409: OpenApiTypes.OBJECT}  # 400, 403 and 404 are documented for every operation (core.schema)


class GroupResetViewSet(viewsets.GenericViewSet[Cluster]):
    """A consumer group's offsets reset, only while the group is EMPTY: 409 says why not (its members, its state),
    or that the group moved since the preview."""

    queryset = Cluster.objects.order_by("pk")
    # What an OPTIONS request describes; the viewset serves clusters, its input is not a Cluster serializer.
    serializer_class = GroupResetSpecSerializer  # type: ignore[assignment]  # the stubs type it for model serializers
    permission_classes = [HasRole]
    viewer_actions = ("reset_preview",)
    operator_actions = ("reset_offsets",)

    @extend_schema(
        operation_id="clusters_groups_reset_offsets_preview",
        parameters=[_GROUP],
        request=GroupResetSpecSerializer,
        responses={200: GroupResetPreviewSerializer, **_REFUSED},
    )
    @action(detail=True, methods=["post"], url_path=r"groups/(?P<group>.+)/reset-offsets/preview")
    def reset_preview(self, request: Request, group: str, pk: str | None = None) -> Response:
        """Per partition: committed offset, new offset, records read again or skipped, log start and end."""
        spec = _spec(GroupResetSpecSerializer, request, group)
        found = groupreset.preview(self.get_object(), group, spec, request.user)
        return Response(GroupResetPreviewSerializer(found).data)

    @extend_schema(
        operation_id="clusters_groups_reset_offsets",
        parameters=[_GROUP],
        request=GroupResetApplySerializer,
        responses={200: GroupResetSerializer, **_REFUSED},
    )
    @action(detail=True, methods=["post"], url_path=r"groups/(?P<group>.+)/reset-offsets")
    def reset_offsets(self, request: Request, group: str, pk: str | None = None) -> Response:
        """Write the previewed offsets into the group. Audited."""
        serializer = _valid(GroupResetApplySerializer, request, group)
        cluster = self.get_object()
        token = serializer.validated_data["preview"]
        written = groupreset.apply(cluster, group, serializer.spec(), token, request.user)
        return Response(GroupResetSerializer(written).data)


def _valid(kind: type[GroupResetSpecSerializer], request: Request, group: str) -> GroupResetSpecSerializer:
    if "\x00" in group:  # librdkafka takes C strings: no such group can be named
        raise ValidationError({"group": ["NUL bytes are not allowed."]})
    serializer = kind(data=request.data)
    serializer.is_valid(raise_exception=True)
    return serializer


def _spec(kind: type[GroupResetSpecSerializer], request: Request, group: str) -> ResetSpec:
    return _valid(kind, request, group).spec()
