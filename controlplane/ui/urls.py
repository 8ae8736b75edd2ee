from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.urls import path

from controlplane.ui import views

urlpatterns = [
    path("", views.dashboard, name="index"),
    path("login/", auth_views.LoginView.as_view(template_name="ui/login.html"), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("clusters/", views.cluster_list, name="page-clusters"),
    path("clusters/new/", views.cluster_form, name="page-cluster-new"),
    path("clusters/<int:pk>/", views.cluster_form, name="page-cluster"),
    path("flows/", views.flow_list, name="page-flows"),
    path("flows/new/", views.flow_form, name="page-flow-new"),
    path("flows/import/", views.flow_import, name="page-flow-import"),
    path("flows/<int:pk>/", views.flow_detail, name="page-flow"),
    path("flows/<int:pk>/edit/", views.flow_form, name="page-flow-edit"),
    path("failover/", views.failover_list, name="page-failovers"),
    path("failover/<int:pk>/", views.failover_wizard, name="page-failover"),
]
