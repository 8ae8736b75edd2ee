"""The cluster browser over the API, read-only: a cluster's topics, consumer groups and remote topics, with the
flows that replicate each topic (``controlplane.flows.browse``). It lives with the flows because they name the
cluster's remote topics and say which topics are replicated; the Kafka reads are the clusters app's."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from controlplane.clusters import browse as groups_browse
from controlplane.clusters import browse_audit
from controlplane.clusters.browse import PageQuery
from controlplane.clusters.models import Cluster
from controlplane.core.pagination import MAX_OFFSET
from controlplane.core.permissions import IsViewer
from controlplane.flows import browse

MAX_SEARCH = 255  # Kafka topic names stop at 249 characters


class PageQuerySerializer(serializers.Serializer[dict[str, Any]]):
    search = serializers.CharField(
        required=False, default="", allow_blank=True, max_length=MAX_SEARCH, help_text="a part of the name, any case"
    )
    limit = serializers.IntegerField(min_value=1, max_value=1000, default=100, help_text="rows per page")
    offset = serializers.IntegerField(min_value=0, max_value=MAX_OFFSET, default=0, help_text="rows to skip")


class FlowRefSerializer(serializers.Serializer[dict[str, Any]]):
    id = serializers.IntegerField()
    name = serializers.CharField(help_text="MM2's flow name, source->target")
    role = serializers.ChoiceField(
        choices=[("source", "replicates the topic from this cluster"), ("target", "writes it here as a remote topic")]
    )
    source_topic = serializers.CharField(help_text="the topic on the flow's source cluster")
    remote_topic = serializers.CharField(help_text="the remote topic it is written to on the flow's target")


class TopicSerializer(serializers.Serializer[dict[str, Any]]):
    topic = serializers.CharField()
    partitions = serializers.IntegerField(help_text="partition count")
    replication_factor = serializers.IntegerField(help_text="replicas of its most replicated partition")
    internal = serializers.BooleanField(
        help_text="MM2's internal topics: names starting with __ or ., or ending with .internal or -internal"
    )
    end_offset = serializers.IntegerField(
        allow_null=True, help_text="end offsets of its partitions summed; null: a partition did not answer"
    )
    records = serializers.IntegerField(allow_null=True, help_text="end minus start offsets, summed; null: as above")
    flows = FlowRefSerializer(many=True, help_text="the flows that replicate it from here or write it here")


class TopicPageSerializer(serializers.Serializer[dict[str, Any]]):
    count = serializers.IntegerField(help_text="topics whose name contains `search`")
    results = TopicSerializer(many=True, help_text="the page, by name")


class PartitionSerializer(serializers.Serializer[dict[str, Any]]):
    partition = serializers.IntegerField()
    leader = serializers.IntegerField(allow_null=True, help_text="broker id; null: no leader")
    replicas = serializers.ListField(child=serializers.IntegerField(), help_text="broker ids")
    isr = serializers.ListField(child=serializers.IntegerField(), help_text="in-sync replicas, broker ids")
    start_offset = serializers.IntegerField(allow_null=True, help_text="log start offset; null: no answer")
    end_offset = serializers.IntegerField(allow_null=True, help_text="high watermark; null: no answer")
    records = serializers.IntegerField(allow_null=True, help_text="end minus start offset")


class ConfigSerializer(serializers.Serializer[dict[str, Any]]):
    name = serializers.CharField()
    value = serializers.CharField(allow_null=True, help_text="null for a sensitive value, which is never shown")
    source = serializers.CharField(help_text="where it is set: DYNAMIC_TOPIC_CONFIG (the topic's own), or broker-wide")  # type: ignore[assignment]  # the API's name; a DRF field's own "source" attribute has it too


class TopicDetailSerializer(TopicSerializer):
    partition_details = PartitionSerializer(many=True, help_text="every partition, by number")
    configs = ConfigSerializer(many=True, help_text="configs not at Kafka's default")


class GroupSerializer(serializers.Serializer[dict[str, Any]]):
    group = serializers.CharField(help_text="group.id")
    state = serializers.CharField(help_text="STABLE, EMPTY, PREPARING_REBALANCE, COMPLETING_REBALANCE, DEAD or UNKNOWN")
    members = serializers.IntegerField(help_text="member count")
    simple = serializers.BooleanField(help_text="only commits offsets (no group membership protocol)")


class GroupPageSerializer(serializers.Serializer[dict[str, Any]]):
    count = serializers.IntegerField(help_text="groups whose id contains `search`")
    results = GroupSerializer(many=True, help_text="the page, by group id")


class AssignedSerializer(serializers.Serializer[dict[str, Any]]):
    topic = serializers.CharField()
    partition = serializers.IntegerField()


class MemberSerializer(serializers.Serializer[dict[str, Any]]):
    member_id = serializers.CharField()
    client_id = serializers.CharField()
    host = serializers.CharField()
    assignment = AssignedSerializer(many=True, help_text="the partitions assigned to it")


class GroupPartitionLagSerializer(serializers.Serializer[dict[str, Any]]):
    topic = serializers.CharField()
    partition = serializers.IntegerField()
    committed_offset = serializers.IntegerField(allow_null=True, help_text="null: nothing committed (assigned only)")
    end_offset = serializers.IntegerField(allow_null=True, help_text="high watermark; null: no answer")
    lag = serializers.IntegerField(allow_null=True, help_text="end minus committed; null when either is unknown")
    client_id = serializers.CharField(allow_null=True, help_text="the member it is assigned to; null: none")


class GroupDetailSerializer(GroupSerializer):
    coordinator = serializers.IntegerField(allow_null=True, help_text="broker id of the group coordinator")
    assignor = serializers.CharField(allow_blank=True, help_text="partition assignor; empty when no member")
    member_details = MemberSerializer(many=True)
    offsets = GroupPartitionLagSerializer(
        many=True, help_text="per partition committed or assigned, by topic and number"
    )


class RemoteTopicSerializer(TopicSerializer):
    source = serializers.CharField(help_text="the cluster it was replicated from (the name's prefix)")  # type: ignore[assignment]  # the API's name; a DRF field's own "source" attribute has it too
    source_chain = serializers.ListField(
        child=serializers.CharField(), help_text="every cluster it came through, nearest first"
    )
    upstream_topic = serializers.CharField(help_text="its name on the source cluster")
    original_topic = serializers.CharField(help_text="its name on the cluster it was first produced to")


class UpstreamSerializer(serializers.Serializer[dict[str, Any]]):
    alias = serializers.CharField(help_text="a cluster whose heartbeats reach this one")
    hops = serializers.IntegerField(help_text="the fewest replication hops from it")
    flow = serializers.IntegerField(allow_null=True, help_text="the flow from it into this cluster; null: none")


class RemoteTopicPageSerializer(serializers.Serializer[dict[str, Any]]):
    count = serializers.IntegerField(help_text="remote topics whose name contains `search`")
    upstream = UpstreamSerializer(many=True, help_text="from the heartbeats topics, whatever the page")
    results = RemoteTopicSerializer(many=True, help_text="the page, by name")


_TOPIC = OpenApiParameter("topic", OpenApiTypes.STR, OpenApiParameter.PATH, description="topic name")
_GROUP = OpenApiParameter("group", OpenApiTypes.STR, OpenApiParameter.PATH, description="group.id")
_NOT_FOUND = {404: OpenApiTypes.OBJECT}


class ClusterBrowseViewSet(viewsets.GenericViewSet[Cluster]):
    """Read-only: what the cluster holds. An unreachable cluster is a 400 naming it and librdkafka's error."""

    queryset = Cluster.objects.order_by("pk")
    permission_classes = [IsViewer]

    @extend_schema(
        operation_id="clusters_browse_topics_list", parameters=[PageQuerySerializer], responses=TopicPageSerializer
    )
    @action(detail=True, methods=["get"], url_path="browse/topics")
    def browse_topics(self, request: Request, pk: str | None = None) -> Response:
        """A page of the cluster's topics with offsets and the flows that replicate them."""
        return Response(TopicPageSerializer(browse.topics(self.get_object(), _page(request))).data)

    @extend_schema(
        operation_id="clusters_browse_topic_retrieve",
        parameters=[_TOPIC],
        responses={200: TopicDetailSerializer, **_NOT_FOUND},
    )
    @action(detail=True, methods=["get"], url_path=r"browse/topics/(?P<topic>[^/]+)")
    def browse_topic(self, request: Request, topic: str, pk: str | None = None) -> Response:
        """One topic: partitions with leader, replicas, ISR and offsets; non-default configs; its flows. Audited."""
        cluster = self.get_object()
        found = browse.topic(cluster, topic)
        browse_audit.topic_offsets_read(request.user, cluster, found)
        return Response(TopicDetailSerializer(found).data)

    @extend_schema(
        operation_id="clusters_browse_groups_list", parameters=[PageQuerySerializer], responses=GroupPageSerializer
    )
    @action(detail=True, methods=["get"], url_path="browse/groups")
    def browse_groups(self, request: Request, pk: str | None = None) -> Response:
        """A page of the cluster's consumer groups with state and member count."""
        return Response(GroupPageSerializer(groups_browse.groups(self.get_object(), _page(request))).data)

    @extend_schema(
        operation_id="clusters_browse_group_retrieve",
        parameters=[_GROUP],
        responses={200: GroupDetailSerializer, **_NOT_FOUND},
    )
    @action(detail=True, methods=["get"], url_path=r"browse/groups/(?P<group>.+)")
    def browse_group(self, request: Request, group: str, pk: str | None = None) -> Response:
        """One consumer group: members and assignments; per partition committed offset, end offset and lag. Audited."""
        if "\x00" in group:  # librdkafka takes C strings: no such group can be asked for
            raise ValidationError({"group": ["NUL bytes are not allowed."]})
        cluster = self.get_object()
        found = groups_browse.group(cluster, group)
        browse_audit.group_offsets_read(request.user, cluster, found)
        return Response(GroupDetailSerializer(found).data)

    @extend_schema(
        operation_id="clusters_browse_remote_topics_list",
        parameters=[PageQuerySerializer],
        responses=RemoteTopicPageSerializer,
    )
    @action(detail=True, methods=["get"], url_path="browse/remote-topics")
    def browse_remote_topics(self, request: Request, pk: str | None = None) -> Response:
        """A page of the remote topics here, where each came from, and the upstream clusters heartbeats reach."""
        return Response(RemoteTopicPageSerializer(browse.remote_topics(self.get_object(), _page(request))).data)


def _page(request: Request) -> PageQuery:
    serializer = PageQuerySerializer(data=request.query_params)
    serializer.is_valid(raise_exception=True)
    return PageQuery(**serializer.validated_data)
