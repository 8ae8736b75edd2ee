from __future__ import annotations

from django.urls import path

from controlplane.orchestration.api.views import FlowStatusView, MetricsView, ValidationView

urlpatterns = [
    path("flows/<int:pk>/status/", FlowStatusView.as_view(), name="flow-status"),
    path("orchestration/validation/", ValidationView.as_view(), name="orchestration-validation"),
]
metrics_urlpatterns = [path("metrics", MetricsView.as_view(), name="metrics")]
