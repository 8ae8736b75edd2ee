"""The audit log, read-only, newest first; filter with ?action=, ?object_type=, ?object_id=, ?actor=."""

from __future__ import annotations

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import viewsets

from controlplane.audit.api.serializers import AuditRecordSerializer
from controlplane.audit.models import AuditRecord
from controlplane.core.pagination import StrictOffsetPagination
from controlplane.core.permissions import HasRole

FILTERS = {"action": "action", "object_type": "object_type", "object_id": "object_id", "actor": "actor_username"}


class AuditPagination(StrictOffsetPagination):
    default_limit = 100


@extend_schema_view(
    list=extend_schema(
        parameters=[OpenApiParameter(param, str, description=f"exact {field}") for param, field in FILTERS.items()]
    )
)
class AuditRecordViewSet(viewsets.ReadOnlyModelViewSet[AuditRecord]):
    queryset = AuditRecord.objects.all()
    serializer_class = AuditRecordSerializer
    permission_classes = [HasRole]
    pagination_class = AuditPagination

    def get_queryset(self) -> QuerySet[AuditRecord]:
        given = {field: self.request.query_params.get(param) for param, field in FILTERS.items()}
        return super().get_queryset().filter(**{field: value for field, value in given.items() if value})
