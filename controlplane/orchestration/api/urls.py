from __future__ import annotations

from django.urls import path

from controlplane.orchestration.api.views import MetricsView, ValidationView

urlpatterns = [
    path("orchestration/validation/", ValidationView.as_view(), name="orchestration-validation"),
]
metrics_urlpatterns = [path("metrics", MetricsView.as_view(), name="metrics")]
