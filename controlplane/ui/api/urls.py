from __future__ import annotations

from django.urls import path

from controlplane.ui.api import demo, views

urlpatterns = [
    path("dashboard/", views.DashboardView.as_view(), name="dashboard"),
    path("flow-preview/", views.FlowPreviewView.as_view(), name="flow-preview"),
    path("flows/<int:pk>/history/", views.FlowHistoryView.as_view(), name="flow-history"),
    path("flows/<int:pk>/checkpoint-freshness/", views.FlowCheckpointsView.as_view(), name="flow-checkpoint-freshness"),
    path("flows/<int:pk>/reports/", views.FlowReportsView.as_view(), name="flow-reports"),
    path("demo/traffic/", demo.DemoTrafficView.as_view(), name="demo-traffic"),
]
