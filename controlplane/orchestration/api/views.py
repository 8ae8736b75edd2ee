from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from controlplane.core.permissions import IsViewer
from controlplane.flows.models import Flow
from controlplane.orchestration.api.serializers import FlowStatusSerializer, PartitionQuerySerializer
from controlplane.orchestration.services import status
from controlplane.orchestration.taskstatus import PartitionPage


class FlowStatusView(APIView):
    """A flow's tasks as the orchestration runs them (state, lease, totals, last error), and one page of its
    partitions with replicated position, lag and latency: `limit` (default 100, at most 1000), `offset`, `topic` (a
    part of the name) and `order` (`partition` or `-lag`)."""

    permission_classes = [IsViewer]

    @extend_schema(parameters=[PartitionQuerySerializer], responses=FlowStatusSerializer)
    def get(self, request: Request, pk: int) -> Response:
        query = PartitionQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        page = PartitionPage(**query.validated_data)
        return Response(FlowStatusSerializer(status.flow_status(get_object_or_404(Flow, pk=pk), page)).data)


class ValidationView(APIView):
    """Desired versus actual assignment: tasks whose running partitions differ from the plan."""

    permission_classes = [IsViewer]

    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request: Request) -> Response:
        return Response({"mismatches": status.validation()})


class MetricsView(APIView):
    """Prometheus text exposition of every task's metrics (token or session auth, like the rest of the API)."""

    permission_classes = [IsViewer]

    @extend_schema(responses={(200, "text/plain"): OpenApiTypes.STR})
    def get(self, request: Request) -> HttpResponse:
        return HttpResponse(status.prometheus_text(), content_type="text/plain; version=0.0.4; charset=utf-8")
