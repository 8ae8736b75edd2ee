"""The demo's traffic switch: viewers see whether the generator runs and produces; operators pause and resume it."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from controlplane.audit.services import record
from controlplane.core.permissions import IsOperator, IsViewer
from controlplane.core.serializers import StrictInput
from controlplane.demo.services import traffic as demo_traffic


class DemoTrafficMovedSerializer(serializers.Serializer[dict[str, object]]):
    group = serializers.CharField()
    to = serializers.CharField(help_text="the cluster the group reads on since the failover")
    failover = serializers.IntegerField(help_text="the failover that moved it")


class DemoTrafficSerializer(serializers.Serializer[dict[str, object]]):
    running = serializers.BooleanField(help_text="a demo traffic generator runs")
    paused = serializers.BooleanField(help_text="it is paused (produces nothing)")
    pending = serializers.BooleanField(help_text="a pause or resume was asked for and is not in effect yet")
    rate = serializers.FloatField(allow_null=True, help_text="records per second it produces when not paused")
    topics = serializers.ListField(child=serializers.CharField())
    produced = serializers.IntegerField(allow_null=True, help_text="records produced since it started")
    group = serializers.CharField(
        allow_null=True, help_text="the consumer group that reads its topics on the source (stopped while paused)"
    )
    cluster = serializers.CharField(allow_null=True, help_text="the cluster it produces to and its group reads from")
    moved = DemoTrafficMovedSerializer(
        allow_null=True, help_text="where a completed failover moved the group, when not to ``cluster``; null: not"
    )


class DemoTrafficSwitchSerializer(StrictInput, serializers.Serializer[dict[str, object]]):
    paused = serializers.BooleanField()
    confirm_cluster = serializers.CharField(
        required=False,
        default="",
        allow_blank=True,
        max_length=255,
        help_text="to resume after the group was failed over away: the generator's cluster, named to confirm",
    )


class DemoTrafficView(APIView):
    """The traffic generator of ``manage.py demo``: {"running", "paused", "rate", ...}; POST {"paused": bool}."""

    def get_permissions(self) -> list[BasePermission]:
        return [IsOperator()] if self.request.method == "POST" else [IsViewer()]

    @extend_schema(responses=DemoTrafficSerializer)
    def get(self, request: Request) -> Response:
        return Response(demo_traffic.state())

    @extend_schema(
        request=DemoTrafficSwitchSerializer,
        responses={
            200: DemoTrafficSerializer,
            409: OpenApiResponse(
                description="no demo traffic generator runs, or a resume after the group was failed over to another "
                "cluster did not confirm the generator's cluster (confirm_cluster)"
            ),
        },
    )
    def post(self, request: Request) -> Response:
        switch = DemoTrafficSwitchSerializer(data=request.data)
        switch.is_valid(raise_exception=True)
        paused = bool(switch.validated_data["paused"])
        before = demo_traffic.state()
        try:
            after = demo_traffic.set_paused(paused, str(switch.validated_data["confirm_cluster"]))
        except (demo_traffic.NotRunning, demo_traffic.MovedAway) as exc:
            return Response({"detail": str(exc), **before}, status=status.HTTP_409_CONFLICT)
        record(request.user, "demo.traffic.pause" if paused else "demo.traffic.resume", None, before, after)
        return Response(after)
