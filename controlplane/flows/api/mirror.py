"""MirrorClient reads of one cluster over the API: upstream clusters, replication hops and remote topics.

They live with the flows because the flows into a cluster name its remote topics (their replication policy).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from controlplane.clusters.models import Cluster
from controlplane.core.permissions import IsViewer
from controlplane.flows import mirror


class UpstreamClustersSerializer(serializers.Serializer[dict[str, Any]]):
    cluster = serializers.CharField()
    upstream_clusters = serializers.ListField(child=serializers.CharField())


class HopsQuerySerializer(serializers.Serializer[dict[str, Any]]):
    upstream = serializers.CharField(max_length=64, help_text="alias of the upstream cluster")


class HopsSerializer(serializers.Serializer[dict[str, Any]]):
    cluster = serializers.CharField()
    upstream = serializers.CharField()
    hops = serializers.IntegerField(help_text="-1 when upstream does not reach this cluster")


class RemoteTopicsQuerySerializer(serializers.Serializer[dict[str, Any]]):
    source = serializers.CharField(max_length=64, required=False, allow_blank=True, help_text="only from this alias")  # type: ignore[assignment]  # the API's name; a DRF field's own "source" attribute has it too


class RemoteTopicsSerializer(serializers.Serializer[dict[str, Any]]):
    cluster = serializers.CharField()
    source = serializers.CharField(allow_null=True)  # type: ignore[assignment]  # the API's name; a DRF field's own "source" attribute has it too
    remote_topics = serializers.ListField(child=serializers.CharField())


class ClusterMirrorViewSet(viewsets.GenericViewSet[Cluster]):
    queryset = Cluster.objects.order_by("pk")
    permission_classes = [IsViewer]

    @extend_schema(responses=UpstreamClustersSerializer)
    @action(detail=True, methods=["get"], url_path="upstream-clusters")
    def upstream_clusters(self, request: Request, pk: str | None = None) -> Response:
        """MirrorClient: every cluster whose heartbeats reach this one."""
        return Response(mirror.upstream_clusters(self.get_object()))

    @extend_schema(parameters=[HopsQuerySerializer], responses=HopsSerializer)
    @action(detail=True, methods=["get"])
    def hops(self, request: Request, pk: str | None = None) -> Response:
        """MirrorClient: the fewest replication hops from upstream to this cluster (-1: not reachable)."""
        query = _query(request, HopsQuerySerializer)
        return Response(mirror.replication_hops(self.get_object(), query["upstream"]))

    @extend_schema(parameters=[RemoteTopicsQuerySerializer], responses=RemoteTopicsSerializer)
    @action(detail=True, methods=["get"], url_path="remote-topics")
    def remote_topics(self, request: Request, pk: str | None = None) -> Response:
        """MirrorClient: the topics replicated to this cluster (from one source, if given)."""
        query = _query(request, RemoteTopicsQuerySerializer)
        return Response(mirror.remote_topics(self.get_object(), query.get("source") or None))


def _query(request: Request, serializer_class: type[serializers.Serializer[dict[str, Any]]]) -> dict[str, Any]:
    serializer = serializer_class(data=request.query_params)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)
