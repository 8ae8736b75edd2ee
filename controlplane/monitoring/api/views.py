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
    PartitionLagHistorySerializer,
    PartitionLagPointSerializer,
)
from controlplane.monitoring.models import FlowObservation
from controlplane.monitoring.services import graph, partition_lag, sampling
from controlplane.orchestration.models import PartitionReport

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
        flows = list(
            Flow.objects.select_related("source", "target").only(*graph.EDGE_FIELDS).filter(pk__in=ids).order_by("pk")
        )
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


MAX_PARTITION_MINUTES = partition_lag.RETENTION_HOURS * 60
MAX_PARTITION = 2**31 - 1
PARTITION_LAG_PARAMETERS = [
    OpenApiParameter("topic", OpenApiTypes.STR, required=True, description="the source topic"),
    OpenApiParameter(
        "partition",
        {"type": "integer", "minimum": 0, "maximum": MAX_PARTITION},
        required=True,
        description="source partition",
    ),
    OpenApiParameter(
        "minutes",
        {"type": "integer", "minimum": 1, "maximum": MAX_PARTITION_MINUTES},
        description=f"the window, 1 to {MAX_PARTITION_MINUTES} minutes (default 30; samples are kept "
        f"{partition_lag.RETENTION_HOURS} h)",
    ),
]


class PartitionLagHistoryView(APIView):
    """One source partition's lag over the last ``minutes``, and a watch so the sampler keeps sampling it."""

    permission_classes = [IsViewer]

    @extend_schema(parameters=PARTITION_LAG_PARAMETERS, responses=PartitionLagHistorySerializer)
    def get(self, request: Request, pk: int) -> Response:
        flow = get_object_or_404(Flow, pk=pk)
        topic = _topic(request.query_params.get("topic"))
        partition = _partition(request.query_params.get("partition"))
        minutes = _minutes(request.query_params.get("minutes", "30"), MAX_PARTITION_MINUTES)
        watched_until = partition_lag.watch(flow, topic, partition)
        report = PartitionReport.objects.filter(flow=flow, topic=topic, partition=partition).first()
        samples = partition_lag.history(flow, topic, partition, minutes)
        body = {
            "flow": flow.pk,
            "topic": topic,
            "partition": partition,
            "minutes": minutes,
            "lag": report.lag if report else None,
            "watched_until": watched_until,
            "samples": PartitionLagPointSerializer(samples, many=True).data,
        }
        return Response(body)


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


def _minutes(text: str, most: int = MAX_HISTORY_MINUTES) -> int:
    try:
        minutes = int(text)
    except ValueError:
        raise ValidationError({"minutes": ["expected a whole number of minutes"]}) from None
    if not 1 <= minutes <= most:
        raise ValidationError({"minutes": [f"expected 1 to {most}"]})
    return minutes


def _topic(text: str | None) -> str:
    if not text:
        raise ValidationError({"topic": ["give the source topic"]})
    if len(text) > 255 or "\x00" in text:
        raise ValidationError({"topic": ["expected a topic name of at most 255 characters"]})
    return text


def _partition(text: str | None) -> int:
    if text is None or text == "":
        raise ValidationError({"partition": ["give the source partition"]})
    if not (text.isascii() and text.isdigit() and len(text) <= 10) or int(text) > MAX_PARTITION:
        raise ValidationError({"partition": [f"expected a whole number from 0 to {MAX_PARTITION}"]})
    return int(text)
