from __future__ import annotations

from typing import Any

from django.db.models import Case, IntegerField, QuerySet, Value, When
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from controlplane.alerts.api.rulesfile import PrometheusRulesFileSerializer
from controlplane.alerts.api.serializers import AlertRuleSerializer, AlertSerializer, WebhookTargetSerializer
from controlplane.alerts.choices import AlertState
from controlplane.alerts.models import Alert, AlertRule, WebhookTarget
from controlplane.alerts.services.promrules import rules_yaml
from controlplane.audit.api.viewsets import AuditedModelViewSet
from controlplane.core.pagination import OptInLimitOffsetPagination

FILTERS = [
    OpenApiParameter("state", OpenApiTypes.STR, enum=[s.value for s in AlertState], description="only this state"),
    OpenApiParameter("flow", OpenApiTypes.INT, description="only this flow's alerts"),
]


class AlertViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet[Alert]):
    """Alerts, firing first, then the rest newest first; ``?state=`` and ``?flow=`` filter; ``?limit=`` pages."""

    queryset = Alert.objects.all()
    serializer_class = AlertSerializer
    pagination_class = OptInLimitOffsetPagination

    def get_queryset(self) -> QuerySet[Alert]:
        rows = Alert.objects.annotate(
            firing=Case(When(state=AlertState.FIRING, then=Value(0)), default=Value(1), output_field=IntegerField())
        ).order_by("firing", "-started_at", "-id")
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


class AlertRuleViewSet(AuditedModelViewSet[AlertRule]):
    """Alert rules: a null ``flow`` is the global default of its kind, a flow's own rule overrides it. Viewers
    read; operators and admins create, edit and delete."""

    queryset = AlertRule.objects.all()
    serializer_class = AlertRuleSerializer
    audit_name = "alert_rule"
    operator_actions = ("create", "update", "partial_update", "destroy")


class WebhookTargetViewSet(AuditedModelViewSet[WebhookTarget]):
    """Webhook targets: viewers read (the URL's scheme and host only, not how deliveries went); admins manage
    them."""

    queryset = WebhookTarget.objects.all()
    serializer_class = WebhookTargetSerializer
    audit_name = "alert_webhook"
    audit_omits = WebhookTargetSerializer.ADMIN_ONLY
