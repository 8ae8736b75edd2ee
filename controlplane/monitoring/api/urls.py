from __future__ import annotations

from django.urls import path

from controlplane.monitoring.api import brokerhealth, views

urlpatterns = [
    path("broker-health/", brokerhealth.BrokerHealthListView.as_view(), name="broker-health"),
    path("clusters/<int:pk>/health/", brokerhealth.ClusterHealthView.as_view(), name="cluster-health"),
    path("dashboard/", views.DashboardView.as_view(), name="dashboard"),
    path("dashboard/edges/", views.FlowEdgesView.as_view(), name="dashboard-edges"),
    path("dashboard/history/", views.TotalHistoryView.as_view(), name="dashboard-history"),
    path("flows/<int:pk>/history/", views.FlowHistoryView.as_view(), name="flow-history"),
    path(
        "flows/<int:pk>/partitions/lag-history/",
        views.PartitionLagHistoryView.as_view(),
        name="flow-partition-lag-history",
    ),
    path("flows/<int:pk>/checkpoint-freshness/", views.FlowCheckpointsView.as_view(), name="flow-checkpoint-freshness"),
]
