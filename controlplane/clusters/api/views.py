"""Cluster CRUD and the connectivity check."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import Q, QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
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
from controlplane.core.schema import FIELD_ERRORS
from controlplane.core.serializers import NoInput
from controlplane.jobs.api.views import START_RESPONSES, start

SEARCH = OpenApiParameter(
    "search", OpenApiTypes.STR, description="only clusters whose alias or bootstrap servers contain it (any case)"
)

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

    def get_queryset(self) -> QuerySet[Cluster]:
        """The list filtered by ``search``: a part of the alias or of the bootstrap servers."""
        clusters = super().get_queryset()
        search = self.request.query_params.get("search", "").strip() if self.action == "list" else ""
        if not search:
            return clusters
        return clusters.filter(Q(alias__icontains=search) | Q(bootstrap_servers__icontains=search))

    @extend_schema(parameters=[SEARCH])
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Clusters by id: the whole list, or a page with `limit` (up to 1000) and `offset`; `search` filters."""
        return super().list(request, *args, **kwargs)

    @extend_schema(responses={204: None, 409: OpenApiResponse(description="flows or failovers use the cluster")})
    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Delete the cluster; refused (409, naming them) while flows or failovers use it."""
        return super().destroy(request, *args, **kwargs)

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
        NoInput(data=request.data).is_valid(raise_exception=True)
        cluster = self.get_object()
        return start(jobs.CHECK, f"cluster.check:{cluster.pk}", jobs.saved_inputs(cluster), request)

    @extend_schema(
        request=ClusterSerializer,
        responses={**START_RESPONSES, 403: OpenApiResponse(FIELD_ERRORS, "bootstrap_servers: not registered")},
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
