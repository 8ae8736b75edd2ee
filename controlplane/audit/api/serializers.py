from __future__ import annotations

from rest_framework import serializers

from controlplane.audit.models import AuditRecord


class AuditRecordSerializer(serializers.ModelSerializer[AuditRecord]):
    actor = serializers.CharField(source="actor_username", read_only=True)

    class Meta:
        model = AuditRecord
        fields = ["id", "at", "actor", "action", "object_type", "object_id", "object_repr", "before", "after"]
        read_only_fields = fields
