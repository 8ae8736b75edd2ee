"""The UI's endpoints beside the flows API: a flow's analytics reports and the topic preview of a flow form."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from controlplane.core.permissions import IsViewer
from controlplane.flows import validation
from controlplane.flows.models import Flow
from controlplane.jobs.api.views import START_RESPONSES, start
from controlplane.ui import jobs
from controlplane.ui.api.serializers import FlowReportsSerializer, PreviewSerializer
from controlplane.ui.services import flowreports, preview
from replication.config import ConfigError


class FlowReportsView(APIView):
    """The latest analytics reports that mention the flow (latency, topology, audit), when any were run."""

    permission_classes = [IsViewer]

    @extend_schema(responses=FlowReportsSerializer)
    def get(self, request: Request, pk: int) -> Response:
        flow = get_object_or_404(Flow.objects.select_related("source", "target"), pk=pk)
        return Response({"flow": flow.pk, "reports": flowreports.latest_for_flow(flow.name)})


class FlowPreviewView(APIView):
    """Which existing source topics a flow's filters replicate, their remote names, and the loops it closes."""

    permission_classes = [IsViewer]

    @extend_schema(
        request=PreviewSerializer,
        responses=START_RESPONSES,
        description="Queues the preview and answers 202 with the job at once; poll its `url`. The job's result: "
        "`topics` (topic, replicated, remote_topic, reason), `replicated`, `total`, `loops`, `refused`, `warning` "
        "(null, or why the filter matches no source topic), and `error` when the source's topics could not be "
        "listed. One preview per user runs at a time (409).",
    )
    def post(self, request: Request) -> Response:
        serializer = PreviewSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        values = dict(serializer.validated_data)
        try:
            preview.check_config(values)
        except ConfigError as exc:
            raise validation.config_error(exc) from None
        return start(jobs.PREVIEW, f"flow.preview:{request.user.pk}", jobs.preview_inputs(values), request)
