from __future__ import annotations

import math
import re
from typing import Any
from urllib.parse import urlsplit

from rest_framework import serializers

from controlplane.alerts.choices import CLUSTER_KINDS
from controlplane.alerts.models import Alert, AlertRule, WebhookTarget
from controlplane.alerts.services import outbound
from controlplane.alerts.services.webhooks import origin
from controlplane.clusters import crypto
from controlplane.core.permissions import ADMIN, has_role
from controlplane.core.serializers import StrictInput
from replication.mm2 import hosts

MAX_FOR_SECONDS = 7 * 24 * 3600
# Anything but RFC 3986's unreserved, reserved and percent characters: markup, quotes, spaces, controls, non-ASCII.
_NOT_URL = re.compile(r"[^A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]")


class AlertSerializer(serializers.ModelSerializer[Alert]):
    flow_url = serializers.SerializerMethodField(help_text="the flow's page, null for a cluster's alert")

    class Meta:
        model = Alert
        fields = [
            "id",
            "kind",
            "subject",
            "name",
            "flow",
            "group",
            "flow_url",
            "cluster",
            "rule",
            "state",
            "value",
            "threshold",
            "message",
            "started_at",
            "fired_at",
            "resolved_at",
        ]
        read_only_fields = fields

    def get_flow_url(self, alert: Alert) -> str | None:
        return f"/flows/{alert.flow_id}/" if alert.flow_id is not None else None


class AlertRuleSerializer(StrictInput, serializers.ModelSerializer[AlertRule]):
    class Meta:
        model = AlertRule
        fields = ["id", "kind", "flow", "threshold", "for_seconds", "enabled", "created_at", "updated_at"]
        read_only_fields = ["created_at", "updated_at"]
        validators: list[Any] = []  # the conditional unique constraints are checked in validate(), naming a field

    def validate_threshold(self, value: float) -> float:
        if not math.isfinite(value) or value < 0:
            raise serializers.ValidationError("expected a finite number, 0 or more")
        return value

    def validate_for_seconds(self, value: int) -> int:
        if value > MAX_FOR_SECONDS:
            raise serializers.ValidationError(f"at most {MAX_FOR_SECONDS} seconds (a week)")
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        kind = attrs.get("kind", getattr(self.instance, "kind", None))
        flow = attrs["flow"] if "flow" in attrs else getattr(self.instance, "flow", None)
        if kind in CLUSTER_KINDS and flow is not None:
            raise serializers.ValidationError({"flow": f"{kind} rules watch clusters: give no flow (global only)"})
        same = AlertRule.objects.filter(kind=kind, flow=flow)
        if self.instance is not None:
            same = same.exclude(pk=self.instance.pk)
        if same.exists():
            field, what = ("flow", "this flow") if flow is not None else ("kind", "the global default")
            raise serializers.ValidationError({field: f"a {kind} rule for {what} exists already: edit that one"})
        return attrs


class WebhookTargetSerializer(StrictInput, serializers.ModelSerializer[WebhookTarget]):
    """The URL is write-only: responses show only its scheme and host (``url_origin``), as it may carry a token.
    How the last delivery went (``last_status``, ``last_error``) is shown to admins only: what an internal host
    answers, or that nothing listens there, is not for every viewer."""

    ADMIN_ONLY = ("last_status", "last_error")

    url = serializers.CharField(write_only=True, max_length=2000, help_text="http(s) URL the alerts are POSTed to")

    class Meta:
        model = WebhookTarget
        fields = [
            "id",
            "name",
            "url",
            "url_origin",
            "enabled",
            "created_at",
            "last_sent_at",
            "last_status",
            "last_error",
        ]
        read_only_fields = ["url_origin", "created_at", "last_sent_at", "last_status", "last_error"]

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        fields = super().get_fields()
        if self.instance is not None and not isinstance(self.instance, list):
            fields["url"].required = False  # an edit keeps the stored URL unless a new one is given
        return fields

    def validate_url(self, value: str) -> str:
        """An http(s) URL of RFC 3986's characters whose host is an RFC 1123 name or an IP address."""
        value = value.strip()
        stray = _NOT_URL.search(value)
        if stray is not None:
            raise serializers.ValidationError(f"{stray.group()!r} is not allowed in a URL (percent-encode it)")
        try:
            parts = urlsplit(value)
        except ValueError:  # unbalanced brackets, or an address in brackets that is not one
            raise serializers.ValidationError("the URL's host is not a host name or an IP address") from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise serializers.ValidationError("expected an http:// or https:// URL with a host")
        try:
            parts.port  # noqa: B018 (raises on a malformed port)
        except ValueError:
            raise serializers.ValidationError("the URL's port is not a number from 0 to 65535") from None
        try:
            hosts.validate_host(parts.hostname)
        except hosts.HostError as exc:
            raise serializers.ValidationError(f"the URL's host: {exc}") from None
        try:
            outbound.check_url(value)
        except outbound.RefusedHost as exc:
            raise serializers.ValidationError(f"the URL's host: {exc}") from None
        return value

    def to_representation(self, instance: WebhookTarget) -> dict[str, Any]:
        data: dict[str, Any] = super().to_representation(instance)
        request = self.context.get("request")
        if request is None or not has_role(request.user, ADMIN):
            for name in self.ADMIN_ONLY:
                data.pop(name, None)
        return data

    def _stored(self, validated: dict[str, Any]) -> dict[str, Any]:
        url = validated.pop("url", None)
        if url is not None:
            validated["url_encrypted"], validated["url_origin"] = crypto.encrypt(url), origin(url)
        return validated

    def create(self, validated_data: dict[str, Any]) -> WebhookTarget:
        return super().create(self._stored(validated_data))

    def update(self, instance: WebhookTarget, validated_data: dict[str, Any]) -> WebhookTarget:
        return super().update(instance, self._stored(validated_data))
