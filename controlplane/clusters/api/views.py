"""Cluster CRUD and the connectivity check."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import BaseSerializer

from controlplane.audit.api.viewsets import AuditedModelViewSet
from controlplane.clusters import mirror, services
from controlplane.clusters.api.serializers import (
    ClusterSerializer,
    ConnectivitySerializer,
    HopsQuerySerializer,
    HopsSerializer,
    RemoteTopicsQuerySerializer,
    RemoteTopicsSerializer,
    UpstreamClustersSerializer,
)
from controlplane.clusters.models import Cluster
from controlplane.core.pagination import OptInLimitOffsetPagination

_CHECK_RESPONSES = {
    200: ConnectivitySerializer,
    400: OpenApiResponse(description="bootstrap_servers: librdkafka's exact connection error"),
}


class ClusterViewSet(AuditedModelViewSet[Cluster]):
    queryset = Cluster.objects.order_by("pk")
    serializer_class = ClusterSerializer
    pagination_class = OptInLimitOffsetPagination
    audit_name = "cluster"
    operator_actions = ("check", "check_unsaved")

    def perform_update(self, serializer: BaseSerializer[Cluster]) -> None:
        with transaction.atomic():
            super().perform_update(serializer)
            cleared = list(getattr(serializer, "credentials_cleared_by", ()))
            if cleared:
                self.audit("credentials_cleared", serializer.instance, after={"sasl_password": "", "changed": cleared})

    @extend_schema(request=None, responses=_CHECK_RESPONSES)
    @action(detail=True, methods=["post"])
    def check(self, request: Request, pk: str | None = None) -> Response:
        """Connect to the cluster: its brokers and topic count, or the exact connection error (400)."""
        cluster = self.get_object()
        return self._checked(cluster, cluster)

    @extend_schema(request=ClusterSerializer, responses=_CHECK_RESPONSES, operation_id="clusters_check_unsaved")
    @action(detail=False, methods=["post"], url_path="check")
    def check_unsaved(self, request: Request) -> Response:
        """Check a cluster's settings before saving them; nothing is saved."""
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        password = data.pop("sasl_password", "")
        cluster = Cluster(**data)
        cluster.sasl_password = password
        return self._checked(cluster, None)

    @extend_schema(responses=UpstreamClustersSerializer)
    @action(detail=True, methods=["get"], url_path="upstream-clusters")
    def upstream_clusters(self, request: Request, pk: str | None = None) -> Response:
        """MirrorClient: every cluster whose heartbeats reach this one."""
        return Response(mirror.upstream_clusters(self.get_object()))

    @extend_schema(parameters=[HopsQuerySerializer], responses=HopsSerializer)
    @action(detail=True, methods=["get"])
    def hops(self, request: Request, pk: str | None = None) -> Response:
        """MirrorClient: the fewest replication hops from upstream to this cluster (-1: not reachable)."""
        query = self.query(HopsQuerySerializer)
        return Response(mirror.replication_hops(self.get_object(), query["upstream"]))

    @extend_schema(parameters=[RemoteTopicsQuerySerializer], responses=RemoteTopicsSerializer)
    @action(detail=True, methods=["get"], url_path="remote-topics")
    def remote_topics(self, request: Request, pk: str | None = None) -> Response:
        """MirrorClient: the topics replicated to this cluster (from one source, if given)."""
        query = self.query(RemoteTopicsQuerySerializer)
        return Response(mirror.remote_topics(self.get_object(), query.get("source") or None))

    def _checked(self, cluster: Cluster, audited: Cluster | None) -> Response:
        result = services.connectivity_check(cluster)
        self.audit("check", audited, after={"alias": cluster.alias, **_summary(result)})
        if not result["ok"]:
            raise ValidationError({"bootstrap_servers": [result["error"]]})
        return Response(result)


def _summary(result: dict[str, Any]) -> dict[str, Any]:
    return {key: result[key] for key in ("ok", "topic_count", "error") if key in result}
