"""Monitoring endpoints: the dashboard's replication graph, a flow's sampled history and its checkpoint freshness."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from django.http import QueryDict
from django.shortcuts import get_object_or_404
from django.utils import timezone
from django.utils.dateparse import parse_datetime
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
    PartitionLagHistorySerializer,
    PartitionLagPointSerializer,
    TotalHistorySerializer,
)
from controlplane.monitoring.models import FlowObservation
from controlplane.monitoring.services import graph, partition_lag, sampling
from controlplane.orchestration.models import PartitionReport

MAX_HISTORY_MINUTES = 24 * 60
MINUTES = OpenApiParameter(
    "minutes", OpenApiTypes.INT, description=f"the window, 1 to {MAX_HISTORY_MINUTES} minutes (default 30)"
)
SINCE = OpenApiParameter(
    "since", OpenApiTypes.DATETIME, description="with until, instead of minutes: the window's start (ISO 8601)"
)
UNTIL = OpenApiParameter(
    "until", OpenApiTypes.DATETIME, description=f"the window's end, at most {MAX_HISTORY_MINUTES} minutes after since"
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

    @extend_schema(parameters=[MINUTES, SINCE, UNTIL], responses=FlowHistorySerializer)
    def get(self, request: Request, pk: int) -> Response:
        flow = get_object_or_404(Flow, pk=pk)
        minutes, since, until = _window(request.query_params)
        history = {"flow": flow.pk, **_history(minutes, sampling.history(flow, since, until))}
        return Response(FlowHistorySerializer(history).data)


class TotalHistoryView(APIView):
    """All flows together over the last ``minutes`` (default 30), or since to until: records/s copied and entering
    replication, and lag, each summed over the flows with samples; the dashboard's charts."""

    permission_classes = [IsViewer]

    @extend_schema(parameters=[MINUTES, SINCE, UNTIL], responses=TotalHistorySerializer)
    def get(self, request: Request) -> Response:
        minutes, since, until = _window(request.query_params)
        return Response(TotalHistorySerializer(_history(minutes, sampling.total_history(since, until))).data)


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


HISTORY_PARAMETERS = frozenset({"minutes", "since", "until"})


def _window(params: QueryDict) -> tuple[int | None, datetime, datetime]:
    """The history's window: the last ``minutes`` (default 30), or ``since`` to ``until`` (ISO 8601, both given,
    at most MAX_HISTORY_MINUTES apart); ``minutes`` is None for the latter."""
    unknown = sorted(set(params) - HISTORY_PARAMETERS)
    if unknown:
        raise ValidationError({name: ["unknown parameter"] for name in unknown})
    if "since" not in params and "until" not in params:
        minutes = _minutes(params.get("minutes", "30"))
        now = timezone.now()
        return minutes, now - timedelta(minutes=minutes), now
    if "minutes" in params:
        raise ValidationError({"minutes": ["give either minutes or since and until, not both"]})
    since, until = (_moment(params, name) for name in ("since", "until"))
    if until <= since:
        raise ValidationError({"until": ["expected a time after since"]})
    if until - since > timedelta(minutes=MAX_HISTORY_MINUTES):
        raise ValidationError({"until": [f"expected at most {MAX_HISTORY_MINUTES} minutes after since"]})
    return None, since, until


def _history(minutes: int | None, found: sampling.History | sampling.TotalHistory) -> dict[str, Any]:
    return {
        "minutes": minutes,
        "since": found.since,
        "until": found.until,
        "bucket_seconds": found.bucket_seconds,
        "samples": found.samples,
    }


def _moment(params: QueryDict, name: str) -> datetime:
    text = params.get(name)
    if not text:
        raise ValidationError({name: ["give since and until together"]})
    moment = parse_datetime(text)
    if moment is None:
        raise ValidationError({name: ["expected an ISO 8601 time, e.g. 2026-11-29T14:05:00Z"]})
    return moment if timezone.is_aware(moment) else timezone.make_aware(moment, UTC)


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
