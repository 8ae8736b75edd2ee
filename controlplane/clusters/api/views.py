"""Cluster CRUD and the connectivity check."""

from __future__ import annotations

from django.db import transaction
from drf_spectacular.utils import extend_schema
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import BaseSerializer

from controlplane.audit.api.viewsets import AuditedModelViewSet
from controlplane.clusters import jobs, services
from controlplane.clusters.api.serializers import ClusterSerializer
from controlplane.clusters.models import Cluster
from controlplane.core.pagination import OptInLimitOffsetPagination
from controlplane.core.permissions import ADMIN, has_role
from controlplane.jobs.api.views import START_RESPONSES, start

_CHECK_DOC = (
    "Queues a connectivity check and answers 202 with the job at once; poll its `url`. The job succeeds with "
    "`result` = `{ok, brokers: [{id, host, port}], topic_count}`, or fails with librdkafka's exact connection error."
)


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

    @extend_schema(request=None, responses=START_RESPONSES, description=_CHECK_DOC)
    @action(detail=True, methods=["post"])
    def check(self, request: Request, pk: str | None = None) -> Response:
        """Connect to the cluster in a background job: its brokers and topic count, or the exact connection error."""
        cluster = self.get_object()
        return start(jobs.CHECK, f"cluster.check:{cluster.pk}", jobs.saved_inputs(cluster), request)

    @extend_schema(
        request=ClusterSerializer,
        responses=START_RESPONSES,
        operation_id="clusters_check_unsaved",
        description=_CHECK_DOC + " Only the credentials in the request are used. An operator may check only broker "
        "addresses of registered clusters (403 naming bootstrap_servers otherwise); an admin may check any.",
    )
    @action(detail=False, methods=["post"], url_path="check")
    def check_unsaved(self, request: Request) -> Response:
        """Check a cluster's settings before saving them; nothing is saved and no stored secret is used."""
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        values = dict(serializer.validated_data)
        if not has_role(request.user, ADMIN):
            unknown = services.unregistered_servers(values["bootstrap_servers"])
            if unknown:
                raise PermissionDenied({"bootstrap_servers": [services.unregistered_message(unknown)]})
        return start(jobs.CHECK, f"cluster.check:unsaved:{request.user.pk}", jobs.unsaved_inputs(values), request)
