"""The Prometheus rules file (``GET /api/v1/alerts/prometheus-rules/``) in the OpenAPI schema: what its YAML holds."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers


class PrometheusRuleSerializer(serializers.Serializer[dict[str, Any]]):
    """One alerting rule, in Prometheus' rule-file format."""

    alert = serializers.CharField(help_text="the alert's name, e.g. MirrorplaneLagRecords")
    expr = serializers.CharField(help_text="PromQL over the metrics /metrics exports")
    # "for" is a Python keyword: the field is declared under another name and renamed below.
    for_ = serializers.CharField(help_text="how long the expression holds before the alert fires, e.g. 300s")
    labels = serializers.DictField(child=serializers.CharField(), help_text="severity and kind")
    annotations = serializers.DictField(child=serializers.CharField(), help_text="summary")


PrometheusRuleSerializer._declared_fields["for"] = PrometheusRuleSerializer._declared_fields.pop("for_")


class PrometheusRuleGroupSerializer(serializers.Serializer[dict[str, Any]]):
    name = serializers.CharField(help_text="mirrorplane")
    rules = PrometheusRuleSerializer(many=True, help_text="the enabled rules Prometheus can express")


class PrometheusRulesFileSerializer(serializers.Serializer[dict[str, Any]]):
    """A Prometheus rules file: one group holding the enabled alert rules."""

    groups = PrometheusRuleGroupSerializer(many=True)
