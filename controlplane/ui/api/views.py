"""The UI's read endpoints beside the flows API: dashboard graph, flow history, checkpoints, topic preview."""

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
from controlplane.jobs.api.views import START_RESPONSES, start
from controlplane.ui import jobs
from controlplane.ui.api.serializers import (
    DashboardSerializer,
    FlowCheckpointsSerializer,
    FlowHistorySerializer,
    FlowReportsSerializer,
    FlowSampleSerializer,
    PreviewSerializer,
)
from controlplane.ui.models import FlowObservation
from controlplane.ui.services import graph, preview, reports, sampling
from replication.config import ConfigError

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


class FlowReportsView(APIView):
    """The latest analytics reports that mention the flow (latency, topology, audit), when any were run."""

    permission_classes = [IsViewer]

    @extend_schema(responses=FlowReportsSerializer)
    def get(self, request: Request, pk: int) -> Response:
        flow = get_object_or_404(Flow.objects.select_related("source", "target"), pk=pk)
        return Response({"flow": flow.pk, "reports": reports.latest_for_flow(flow.name)})


class FlowPreviewView(APIView):
    """Which existing source topics a flow's filters replicate, their remote names, and the loops it closes."""

    permission_classes = [IsViewer]

    @extend_schema(
        request=PreviewSerializer,
        responses=START_RESPONSES,
        description="Queues the preview and answers 202 with the job at once; poll its `url`. The job's result: "
        "`topics` (topic, replicated, remote_topic, reason), `replicated`, `total`, `loops`, `refused`, and "
        "`error` when the source's topics could not be listed. One preview per user runs at a time (409).",
    )
    def post(self, request: Request) -> Response:
        serializer = PreviewSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        values = dict(serializer.validated_data)
        try:
            preview.check_config(values)
        except ConfigError as exc:
            raise ValidationError({exc.property_name.replace(".", "_"): [exc.reason]}) from None
        return start(jobs.PREVIEW, f"flow.preview:{request.user.pk}", jobs.preview_inputs(values), request)


def _minutes(text: str) -> int:
    try:
        minutes = int(text)
    except ValueError:
        raise ValidationError({"minutes": ["expected a whole number of minutes"]}) from None
    if not 1 <= minutes <= MAX_HISTORY_MINUTES:
        raise ValidationError({"minutes": [f"expected 1 to {MAX_HISTORY_MINUTES}"]})
    return minutes
