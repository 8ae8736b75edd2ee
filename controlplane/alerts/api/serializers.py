from __future__ import annotations

import math
import re
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from django.utils import timezone
from rest_framework import serializers

from controlplane.alerts.choices import CLUSTER_KINDS, URL_KINDS, TargetKind
from controlplane.alerts.models import Alert, AlertRule, Silence, WebhookTarget
from controlplane.alerts.services import outbound, silences
from controlplane.alerts.services.webhooks import origin
from controlplane.clusters import crypto
from controlplane.core.permissions import ADMIN, has_role
from controlplane.core.serializers import StrictInput
from replication.mm2 import hosts

MAX_FOR_SECONDS = 7 * 24 * 3600
MAX_SILENCE_SECONDS = 30 * 24 * 3600
MAX_RECIPIENTS = 50
# Anything but RFC 3986's unreserved, reserved and percent characters: markup, quotes, spaces, controls, non-ASCII.
_NOT_URL = re.compile(r"[^A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]")


class AlertSerializer(serializers.ModelSerializer[Alert]):
    """An alert; ``silenced_by`` lists the silences holding its notifications now (from the view's context)."""

    flow_url = serializers.SerializerMethodField(help_text="the flow's page, null for a cluster's alert")
    acknowledged_by = serializers.SerializerMethodField(help_text="the user who acknowledged it, or null")
    silenced_by = serializers.SerializerMethodField(help_text="ids of the silences that hold for it now")

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
            "acknowledged_at",
            "acknowledged_by",
            "acknowledged_note",
            "silenced_by",
        ]
        read_only_fields = fields

    def get_flow_url(self, alert: Alert) -> str | None:
        return f"/flows/{alert.flow_id}/" if alert.flow_id is not None else None

    def get_acknowledged_by(self, alert: Alert) -> str | None:
        return alert.acknowledged_by.get_username() if alert.acknowledged_by is not None else None

    def get_silenced_by(self, alert: Alert) -> list[int]:
        if alert.state == "resolved":
            return []
        return silences.silencing(alert, self.context.get("silences", []), self.context.get("now", timezone.now()))


class AcknowledgeSerializer(StrictInput, serializers.Serializer[dict[str, Any]]):
    note = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")


class SilenceSerializer(StrictInput, serializers.ModelSerializer[Silence]):
    """A silence: a rule or a kind (at least one), optionally one flow or cluster, for ``duration_seconds`` from
    now. ``created_by`` is the user who made it."""

    duration_seconds = serializers.IntegerField(
        write_only=True, min_value=60, max_value=MAX_SILENCE_SECONDS, help_text="how long it holds, from now"
    )
    created_by = serializers.SerializerMethodField()
    active = serializers.SerializerMethodField(help_text="whether it holds now")

    class Meta:
        model = Silence
        fields = [
            "id",
            "kind",
            "rule",
            "flow",
            "cluster",
            "reason",
            "duration_seconds",
            "created_by",
            "created_at",
            "starts_at",
            "ends_at",
            "active",
        ]
        read_only_fields = ["created_at", "starts_at", "ends_at"]
        extra_kwargs = {"reason": {"allow_blank": False}}

    def get_created_by(self, silence: Silence) -> str | None:
        return silence.created_by.get_username() if silence.created_by is not None else None

    def get_active(self, silence: Silence) -> bool:
        return silence.starts_at <= timezone.now() < silence.ends_at

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        kind, rule = attrs.get("kind", ""), attrs.get("rule")
        if not kind and rule is None:
            raise serializers.ValidationError({"kind": "give a rule or a kind for the silence to match"})
        if kind and rule is not None and rule.kind != kind:
            raise serializers.ValidationError({"kind": f"the rule watches {rule.kind}, not {kind}"})
        return attrs

    def create(self, validated_data: dict[str, Any]) -> Silence:
        now = timezone.now()
        duration = timedelta(seconds=validated_data.pop("duration_seconds"))
        return Silence.objects.create(**validated_data, starts_at=now, ends_at=now + duration)


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
    """A notification target of a ``kind``: a webhook or Slack-compatible target has a URL, an e-mail target a list
    of recipients. The URL is write-only: responses show only its scheme and host (``url_origin``), as it may carry a
    token. How the last delivery went (``last_status``, ``last_error``) is shown to admins only: what an internal host
    answers, or that nothing listens there, is not for every viewer."""

    ADMIN_ONLY = ("last_status", "last_error")

    url = serializers.CharField(
        write_only=True, required=False, max_length=2000, help_text="http(s) URL the alerts are POSTed to"
    )
    recipients = serializers.ListField(
        child=serializers.EmailField(), required=False, max_length=MAX_RECIPIENTS, help_text="e-mail targets"
    )

    class Meta:
        model = WebhookTarget
        fields = [
            "id",
            "name",
            "kind",
            "url",
            "url_origin",
            "recipients",
            "enabled",
            "created_at",
            "last_sent_at",
            "last_status",
            "last_error",
        ]
        read_only_fields = ["url_origin", "created_at", "last_sent_at", "last_status", "last_error"]

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        """A URL for a URL kind (an edit keeps the stored one unless a new one is given), recipients for e-mail."""
        kind = attrs.get("kind", getattr(self.instance, "kind", TargetKind.WEBHOOK))
        if kind in URL_KINDS:
            if "url" not in attrs and not getattr(self.instance, "url_encrypted", ""):
                raise serializers.ValidationError({"url": f"a {kind} target needs a URL"})
            if attrs.get("recipients"):
                raise serializers.ValidationError({"recipients": "only e-mail targets have recipients"})
            attrs["recipients"] = []
        else:
            if "url" in attrs:
                raise serializers.ValidationError({"url": "an e-mail target has no URL (give recipients)"})
            if not attrs.get("recipients", getattr(self.instance, "recipients", [])):
                raise serializers.ValidationError({"recipients": "an e-mail target needs one recipient or more"})
            attrs["url_encrypted"], attrs["url_origin"] = "", ""
        return attrs

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
