"""Broker health endpoints: one cluster's figures and every cluster's (the dashboard's health lines). They read the
observer's rows (``services.brokerhealth``), never a broker."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from controlplane.clusters.models import Cluster
from controlplane.core.permissions import IsViewer
from controlplane.monitoring.models import BrokerHealth
from controlplane.monitoring.services import brokerhealth


class BrokerHealthSerializer(serializers.Serializer[dict[str, object]]):
    """A cluster's broker health; every figure null with ``reason`` before the first observation or when it could
    not be read."""

    cluster = serializers.IntegerField()
    alias = serializers.CharField()
    at = serializers.DateTimeField(allow_null=True, help_text="when the observer read it")
    brokers_up = serializers.IntegerField(allow_null=True, help_text="brokers in the cluster's metadata")
    brokers_known = serializers.IntegerField(help_text="brokers seen since the cluster was last edited")
    brokers_down = serializers.IntegerField(allow_null=True, help_text="brokers seen before and missing now")
    brokers = serializers.ListField(child=serializers.IntegerField())
    missing_brokers = serializers.ListField(child=serializers.IntegerField())
    controller_id = serializers.IntegerField(allow_null=True, help_text="the active controller (DescribeCluster)")
    partitions = serializers.IntegerField(allow_null=True)
    under_replicated = serializers.IntegerField(allow_null=True, help_text="partitions with ISR smaller than replicas")
    offline = serializers.IntegerField(allow_null=True, help_text="partitions without a live leader")
    under_min_isr = serializers.IntegerField(
        allow_null=True, help_text="partitions without a leader or with ISR below min.insync.replicas"
    )
    examples = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()), help_text="figure -> first topic-partitions"
    )
    reason = serializers.CharField(help_text='"no data: ..." when a figure is null, else empty')


def _row(cluster: Cluster, health: BrokerHealth | None) -> dict[str, object]:
    return {"cluster": cluster.pk, "alias": cluster.alias, **brokerhealth.figures(health)}


class ClusterHealthView(APIView):
    """One cluster's broker health, as last observed."""

    permission_classes = [IsViewer]

    @extend_schema(responses=BrokerHealthSerializer)
    def get(self, request: Request, pk: int) -> Response:
        cluster = get_object_or_404(Cluster, pk=pk)
        health = BrokerHealth.objects.filter(cluster=cluster).first()
        return Response(_row(cluster, health))


class BrokerHealthListView(APIView):
    """Every cluster's broker health, by alias."""

    permission_classes = [IsViewer]

    @extend_schema(responses=BrokerHealthSerializer(many=True))
    def get(self, request: Request) -> Response:
        rows = {h.cluster_id: h for h in BrokerHealth.objects.all()}
        return Response([_row(c, rows.get(c.pk)) for c in Cluster.objects.order_by("alias")])
