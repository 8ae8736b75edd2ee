from __future__ import annotations

from typing import Any

from django.db.models import Case, IntegerField, QuerySet, Value, When
from django.http import HttpResponse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from controlplane.alerts.api.rulesfile import PrometheusRulesFileSerializer
from controlplane.alerts.api.serializers import (
    AcknowledgeSerializer,
    AlertRuleSerializer,
    AlertSerializer,
    SilenceSerializer,
    WebhookTargetSerializer,
)
from controlplane.alerts.choices import AlertState
from controlplane.alerts.models import Alert, AlertRule, Silence, WebhookTarget
from controlplane.alerts.services import silences, webhooks
from controlplane.alerts.services.promrules import rules_yaml
from controlplane.audit.api.viewsets import AuditedModelViewSet, Conflict
from controlplane.core.pagination import OptInLimitOffsetPagination
from controlplane.core.serializers import NoInput

FILTERS = [
    OpenApiParameter("state", OpenApiTypes.STR, enum=[s.value for s in AlertState], description="only this state"),
    OpenApiParameter("flow", OpenApiTypes.INT, description="only this flow's alerts"),
]


class AlertViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet[Alert]):
    """Alerts, firing first, then the rest newest first; ``?state=`` and ``?flow=`` filter; ``?limit=`` pages.
    Operators acknowledge a firing alert."""

    queryset = Alert.objects.all()
    serializer_class = AlertSerializer
    pagination_class = OptInLimitOffsetPagination
    operator_actions = ("acknowledge",)

    def get_serializer_context(self) -> dict[str, Any]:
        now = timezone.now()
        context = dict(super().get_serializer_context())
        context.update(now=now, silences=silences.active(now))
        return context

    def get_queryset(self) -> QuerySet[Alert]:
        rows = (
            Alert.objects.select_related("acknowledged_by")
            .annotate(
                firing=Case(When(state=AlertState.FIRING, then=Value(0)), default=Value(1), output_field=IntegerField())
            )
            .order_by("firing", "-started_at", "-id")
        )
        if self.action != "list":
            return rows
        state, flow = self.request.query_params.get("state"), self.request.query_params.get("flow")
        if state is not None:
            if state not in AlertState.values:
                raise ValidationError({"state": [f"expected one of {', '.join(AlertState.values)}"]})
            rows = rows.filter(state=state)
        if flow is not None:
            if not (flow.isascii() and flow.isdigit() and len(flow) <= 10):
                raise ValidationError({"flow": ["expected a flow id (a whole number)"]})
            rows = rows.filter(flow_id=int(flow))
        return rows

    @extend_schema(parameters=FILTERS)
    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().list(request, *args, **kwargs)

    @extend_schema(responses={(200, "text/yaml"): PrometheusRulesFileSerializer})
    @action(detail=False, url_path="prometheus-rules", pagination_class=None)
    def prometheus_rules(self, request: Request) -> HttpResponse:
        """A Prometheus rules file expressing the enabled rules on the metrics /metrics exports."""
        return HttpResponse(rules_yaml(), content_type="text/yaml; charset=utf-8")

    @extend_schema(request=AcknowledgeSerializer, responses=AlertSerializer)
    @action(detail=True, methods=["post"])
    def acknowledge(self, request: Request, pk: str | None = None) -> Response:
        """Acknowledge the firing alert (who, when, an optional note): it is not notified again while it fires."""
        body = AcknowledgeSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            alert = silences.acknowledge(self.get_object(), request.user, body.validated_data["note"], timezone.now())
        except silences.NotAcknowledgeable as exc:
            raise Conflict(str(exc)) from None
        return Response(self.get_serializer(alert).data)


class AlertRuleViewSet(AuditedModelViewSet[AlertRule]):
    """Alert rules: a null ``flow`` is the global default of its kind, a flow's own rule overrides it. Viewers
    read; operators and admins create, edit and delete."""

    queryset = AlertRule.objects.all()
    serializer_class = AlertRuleSerializer
    audit_name = "alert_rule"
    operator_actions = ("create", "update", "partial_update", "destroy")


class WebhookTargetViewSet(AuditedModelViewSet[WebhookTarget]):
    """Notification targets (webhook, Slack-compatible, e-mail): viewers read (a URL's scheme and host only, not how
    deliveries went); admins manage them and send test notifications."""

    queryset = WebhookTarget.objects.all()
    serializer_class = WebhookTargetSerializer
    audit_name = "alert_webhook"
    audit_omits = WebhookTargetSerializer.ADMIN_ONLY

    @extend_schema(
        request=NoInput,
        responses=inline_serializer(
            "TestNotification",
            {
                "delivered": serializers.BooleanField(),
                "status": serializers.IntegerField(allow_null=True),
                "error": serializers.CharField(),
            },
        ),
    )
    @action(detail=True, methods=["post"], url_path="test")
    def send_test(self, request: Request, pk: str | None = None) -> Response:
        """Send a test notification now (bounded by a few seconds' timeout, outside any transaction): the HTTP
        status and the error, if it failed, are returned and stored on the target."""
        NoInput(data=request.data).is_valid(raise_exception=True)
        outcome = webhooks.send_test(self.get_object(), request.user)
        return Response({"delivered": outcome.delivered, "status": outcome.status, "error": outcome.error})


class SilenceViewSet(AuditedModelViewSet[Silence]):
    """Silences, latest ending first: viewers read; operators create them and expire them early (they are kept)."""

    queryset = Silence.objects.select_related("created_by")
    serializer_class = SilenceSerializer
    audit_name = "alert_silence"
    operator_actions = ("create", "expire")
    http_method_names = ["get", "post", "head", "options"]

    def perform_create(self, serializer: Any) -> None:
        serializer.validated_data["created_by"] = self.request.user
        super().perform_create(serializer)

    @extend_schema(request=NoInput, responses=SilenceSerializer)
    @action(detail=True, methods=["post"])
    def expire(self, request: Request, pk: str | None = None) -> Response:
        """End the silence now."""
        NoInput(data=request.data).is_valid(raise_exception=True)
        silence = silences.expire(self.get_object(), request.user, timezone.now())
        return Response(self.get_serializer(silence).data)
