"""Monitoring endpoints: the dashboard's replication graph, a flow's sampled history and its checkpoint freshness."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from controlplane.core.permissions import IsViewer
from controlplane.flows.models import Flow
from controlplane.monitoring.api.serializers import (
    DashboardSerializer,
    FlowCheckpointsSerializer,
    FlowEdgesSerializer,
    FlowHistorySerializer,
    FlowSampleSerializer,
)
from controlplane.monitoring.models import FlowObservation
from controlplane.monitoring.services import graph, sampling

MAX_HISTORY_MINUTES = 24 * 60
MINUTES = OpenApiParameter(
    "minutes", OpenApiTypes.INT, description=f"the window, 1 to {MAX_HISTORY_MINUTES} minutes (default 30)"
)


class DashboardView(APIView):
    """The replication graph: clusters, flows with health, throughput, lag and p99, heartbeat hops, tiles."""

    permission_classes = [IsViewer]

    @extend_schema(responses=DashboardSerializer)
    def get(self, request: Request) -> Response:
        return Response(graph.dashboard())


MAX_EDGES = 1000
FLOWS = OpenApiParameter(
    "flows", OpenApiTypes.STR, description=f"comma-separated flow ids, at most {MAX_EDGES} (a page of the flow list)"
)


class FlowEdgesView(APIView):
    """The dashboard's edge (health, throughput, lag, p99) of the flows named by ``flows``: what the flow list shows
    beside a page of flows, without the whole graph. Ids of flows that do not exist are left out."""

    permission_classes = [IsViewer]

    @extend_schema(parameters=[FLOWS], responses=FlowEdgesSerializer)
    def get(self, request: Request) -> Response:
        ids = _flow_ids(request.query_params.get("flows", ""))
        flows = list(Flow.objects.select_related("source", "target").filter(pk__in=ids).order_by("pk"))
        return Response({"edges": graph.flow_edges(flows)})


class FlowHistoryView(APIView):
    """The flow's samples over the last ``minutes`` (default 30): throughput, lag, p99 latency, health."""

    permission_classes = [IsViewer]

    @extend_schema(parameters=[MINUTES], responses=FlowHistorySerializer)
    def get(self, request: Request, pk: int) -> Response:
        flow = get_object_or_404(Flow, pk=pk)
        minutes = _minutes(request.query_params.get("minutes", "30"))
        samples = sampling.history(flow, minutes)
        return Response({"flow": flow.pk, "minutes": minutes, "samples": FlowSampleSerializer(samples, many=True).data})


class FlowCheckpointsView(APIView):
    """Checkpoint freshness per consumer group, as last read from the target cluster."""

    permission_classes = [IsViewer]

    @extend_schema(responses=FlowCheckpointsSerializer)
    def get(self, request: Request, pk: int) -> Response:
        flow = get_object_or_404(Flow, pk=pk)
        observation = FlowObservation.objects.filter(flow=flow).first()
        if observation is None:
            return Response({"flow": flow.pk, "at": None, "error": "", "groups": {}})
        body = {"flow": flow.pk, "at": observation.at, "error": observation.error, "groups": observation.checkpoints}
        return Response(body)


def _flow_ids(text: str) -> list[int]:
    parts = [part.strip() for part in text.split(",") if part.strip()]
    if not parts:
        raise ValidationError({"flows": ["give flow ids, comma-separated"]})
    if len(parts) > MAX_EDGES:
        raise ValidationError({"flows": [f"at most {MAX_EDGES} ids, got {len(parts)}"]})
    if not all(part.isascii() and part.isdigit() and len(part) <= 10 for part in parts):
        raise ValidationError({"flows": ["expected whole numbers separated by commas"]})
    return [int(part) for part in parts]


def _minutes(text: str) -> int:
    try:
        minutes = int(text)
    except ValueError:
        raise ValidationError({"minutes": ["expected a whole number of minutes"]}) from None
    if not 1 <= minutes <= MAX_HISTORY_MINUTES:
        raise ValidationError({"minutes": [f"expected 1 to {MAX_HISTORY_MINUTES}"]})
    return minutes
