from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.urls import path

from controlplane.clusters.models import Cluster
from controlplane.core.permissions import ADMIN
from controlplane.failover.models import Failover
from controlplane.flows.models import Flow
from controlplane.ui import views
from controlplane.ui.views import Page

clusters = {"nav": "clusters", "queryset": Cluster.objects.all(), "object_name": "cluster"}
cluster_form = {**clusters, "template_name": "ui/cluster_form.html", "extra": views.cluster_form}
flows = {"nav": "flows", "queryset": Flow.objects.select_related("source", "target"), "object_name": "flow"}
flow_form = {**flows, "template_name": "ui/flow_form.html", "role": ADMIN, "extra": views.flow_form}

urlpatterns = [
    path("", Page.as_view(template_name="ui/dashboard.html", nav="dashboard"), name="index"),
    path("login/", auth_views.LoginView.as_view(template_name="ui/login.html"), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("clusters/", Page.as_view(template_name="ui/cluster_list.html", nav="clusters"), name="page-clusters"),
    path("clusters/new/", Page.as_view(**cluster_form, role=ADMIN), name="page-cluster-new"),
    path("clusters/<int:pk>/", Page.as_view(**cluster_form), name="page-cluster"),
    path(
        "clusters/<int:pk>/browse/",
        Page.as_view(**clusters, template_name="ui/cluster_browse.html"),
        name="page-cluster-browse",
    ),
    path("flows/", Page.as_view(template_name="ui/flow_list.html", nav="flows"), name="page-flows"),
    path("flows/new/", Page.as_view(**flow_form), name="page-flow-new"),
    path(
        "flows/import/",
        Page.as_view(template_name="ui/flow_import.html", nav="flows", role=ADMIN),
        name="page-flow-import",
    ),
    path("flows/<int:pk>/", Page.as_view(**flows, template_name="ui/flow_detail.html"), name="page-flow"),
    path("flows/<int:pk>/edit/", Page.as_view(**flow_form), name="page-flow-edit"),
    path(
        "flows/<int:pk>/records/", Page.as_view(**flows, template_name="ui/flow_records.html"), name="page-flow-records"
    ),
    path("alerts/", Page.as_view(template_name="ui/alerts.html", nav="alerts"), name="page-alerts"),
    path("audit/", Page.as_view(template_name="ui/audit.html", nav="audit"), name="page-audit"),
    path(
        "failover/",
        Page.as_view(template_name="ui/failover_list.html", nav="failover", extra=views.failover_list),
        name="page-failovers",
    ),
    path(
        "failover/<int:pk>/",
        Page.as_view(
            template_name="ui/failover_wizard.html",
            nav="failover",
            queryset=Failover.objects.all(),
            object_name="failover",
            extra=views.failover_wizard,
        ),
        name="page-failover",
    ),
]
