from __future__ import annotations

from django.urls import path

from controlplane.ui.api import views

urlpatterns = [
    path("flow-preview/", views.FlowPreviewView.as_view(), name="flow-preview"),
    path("flows/<int:pk>/reports/", views.FlowReportsView.as_view(), name="flow-reports"),
]
