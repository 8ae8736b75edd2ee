from __future__ import annotations

from typing import Any

from django.db import models
from rest_framework import serializers

from controlplane.core.fields import BoundedJSONField
from controlplane.reports.models import Report

MAX_PARAMETERS = 20


class ReportSerializer(serializers.ModelSerializer[Report]):
    # parameters: a form field's JSON string is parsed with the request's depth bound
    serializer_field_mapping = serializers.ModelSerializer.serializer_field_mapping | {
        models.JSONField: BoundedJSONField
    }

    class Meta:
        model = Report
        fields = [
            "id",
            "job",
            "since",
            "until",
            "parameters",
            "status",
            "created_at",
            "started_at",
            "finished_at",
            "duration_seconds",
            "output",
            "summary",
            "error",
        ]
        read_only_fields = [
            "status",
            "created_at",
            "started_at",
            "finished_at",
            "duration_seconds",
            "output",
            "summary",
            "error",
        ]

    def validate_parameters(self, value: dict[str, Any]) -> dict[str, Any]:
        if not isinstance(value, dict) or len(value) > MAX_PARAMETERS:
            raise serializers.ValidationError(f"an object of at most {MAX_PARAMETERS} job options")
        if any(not isinstance(v, (str, int, float, bool)) for v in value.values()):
            raise serializers.ValidationError("option values must be strings, numbers or booleans")
        if any("\x00" in k or (isinstance(v, str) and "\x00" in v) for k, v in value.items()):
            raise serializers.ValidationError("NUL bytes are not allowed.")  # Postgres refuses them in JSON
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        since, until = attrs.get("since"), attrs.get("until")
        if since and until and since >= until:
            raise serializers.ValidationError({"until": "must be after since"})
        return attrs
