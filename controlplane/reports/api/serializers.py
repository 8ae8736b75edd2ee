from __future__ import annotations

from typing import Any

from django.db import models
from rest_framework import serializers

from controlplane.core.fields import BoundedJSONField
from controlplane.core.serializers import StrictInput
from controlplane.reports import services
from controlplane.reports.choices import ReportJob
from controlplane.reports.models import Report
from replication.analytics.options import OptionError, declared
from replication.analytics.options import validate as validate_options

MAX_PARAMETERS = 20


def _parameters_help() -> str:
    jobs = [f"{job}: {', '.join(declared(job)) or 'none'}" for job in ReportJob.values]
    return f"the job's options by name (see docs/analytics.md for types, bounds and defaults); {'; '.join(jobs)}"


class ReportSerializer(StrictInput, serializers.ModelSerializer[Report]):
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
        extra_kwargs = {"parameters": {"help_text": _parameters_help()}}

    def validate_parameters(self, value: dict[str, Any]) -> dict[str, Any]:
        # The shape only; which options, of which types and bounds, depends on the job: validate() checks those.
        if not isinstance(value, dict) or len(value) > MAX_PARAMETERS:
            raise serializers.ValidationError(f"an object of at most {MAX_PARAMETERS} job options")
        if any("\x00" in k or (isinstance(v, str) and "\x00" in v) for k, v in value.items()):
            raise serializers.ValidationError("NUL bytes are not allowed.")  # Postgres refuses them in JSON
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        try:
            services.check_window(attrs.get("since"), attrs.get("until"))
        except services.WindowError as exc:
            raise serializers.ValidationError({exc.field: [exc.reason]}) from None
        try:  # the job is given only what its declared options allow
            attrs["parameters"] = validate_options(attrs["job"], attrs.get("parameters") or {})
        except OptionError as exc:
            raise serializers.ValidationError({"parameters": {exc.option: [exc.reason]}}) from None
        return attrs

    def create(self, validated_data: dict[str, Any]) -> Report:
        return services.submit(**validated_data)  # refuses past the active-run limits (ActiveLimitReached)


class ReportLimitSerializer(serializers.Serializer[dict[str, Any]]):
    """HTTP 429: too many report runs queued or running."""

    detail = serializers.CharField(help_text="what was refused, and the limit")
    limit = serializers.CharField(
        help_text="the setting that bounds the runs: MIRRORPLANE_REPORT_MAX_ACTIVE[_PER_USER]"
    )
    value = serializers.IntegerField(help_text="the setting's value: how many runs may be queued or running")
