"""The audit log, read-only, newest first; filter with ?actor=, ?action=, ?object_type=, ?object_id=, ?since=,
?until=; page with ?limit= and ?offset=. An unknown parameter is a 400 that names it, not a filter ignored."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers, viewsets
from rest_framework.exceptions import ValidationError

from controlplane.audit.api.serializers import AuditRecordSerializer
from controlplane.audit.models import AuditRecord
from controlplane.core.pagination import StrictOffsetPagination
from controlplane.core.permissions import HasRole

PAGING = ("limit", "offset", "format")  # the pagination's own parameters, and DRF's format suffix


class AuditPagination(StrictOffsetPagination):
    default_limit = 100


class AuditQuerySerializer(serializers.Serializer[Any]):
    actor = serializers.CharField(required=False, max_length=150, help_text="exact username")
    action = serializers.CharField(required=False, max_length=64, help_text="exact action, e.g. cluster.update")
    object_type = serializers.CharField(required=False, max_length=64, help_text="exact type, e.g. flows.flow")
    object_id = serializers.CharField(required=False, max_length=64, help_text="exact id of the object")
    since = serializers.DateTimeField(required=False, help_text="records at or after this time (ISO 8601)")
    until = serializers.DateTimeField(required=False, help_text="records before this time (ISO 8601)")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if "since" in attrs and "until" in attrs and attrs["since"] >= attrs["until"]:
            raise ValidationError({"until": ["must be after since"]})
        return attrs


FIELDS = {"actor": "actor_username", "action": "action", "object_type": "object_type", "object_id": "object_id"}


@extend_schema_view(list=extend_schema(parameters=[AuditQuerySerializer]))
class AuditRecordViewSet(viewsets.ReadOnlyModelViewSet[AuditRecord]):
    queryset = AuditRecord.objects.all()
    serializer_class = AuditRecordSerializer
    permission_classes = [HasRole]
    pagination_class = AuditPagination

    def get_queryset(self) -> QuerySet[AuditRecord]:
        rows = super().get_queryset()
        if self.action != "list":
            return rows
        params = self.request.query_params
        unknown = sorted(set(params) - set(AuditQuerySerializer().fields) - set(PAGING))
        if unknown:
            expected = ", ".join([*AuditQuerySerializer().fields, "limit", "offset"])
            raise ValidationError({name: [f"unknown parameter (expected one of {expected})"] for name in unknown})
        query = AuditQuerySerializer(data=params)
        query.is_valid(raise_exception=True)
        given = query.validated_data
        rows = rows.filter(**{field: given[param] for param, field in FIELDS.items() if given.get(param)})
        if "since" in given:
            rows = rows.filter(at__gte=given["since"])
        if "until" in given:
            rows = rows.filter(at__lt=given["until"])
        return rows
