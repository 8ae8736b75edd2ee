"""The composition root of the version 1 REST API, mounted once at ``/api/v1/`` by ``urls.py``.

Every app's router is merged into one, so the API root lists every resource; the apps' plain views (a flow's
status, history and reports, the dashboard, the preview, the demo switch) follow as their own URL patterns. It lives
beside settings.py and urls.py, above every app, so no app imports the others through it."""

from __future__ import annotations

from rest_framework.routers import DefaultRouter

from controlplane.accounts.api.urls import router as accounts_router
from controlplane.alerts.api.urls import router as alerts_router
from controlplane.audit.api.urls import router as audit_router
from controlplane.clusters.api.urls import group_reset_urlpatterns
from controlplane.clusters.api.urls import router as clusters_router
from controlplane.demo.api.urls import urlpatterns as demo_urlpatterns
from controlplane.failover.api.urls import router as failover_router
from controlplane.flows.api.urls import cluster_read_urlpatterns
from controlplane.flows.api.urls import router as flows_router
from controlplane.jobs.api.urls import router as jobs_router
from controlplane.monitoring.api.urls import urlpatterns as monitoring_urlpatterns
from controlplane.orchestration.api.urls import urlpatterns as orchestration_urlpatterns
from controlplane.reports.api.urls import router as reports_router
from controlplane.ui.api.urls import urlpatterns as ui_urlpatterns

router = DefaultRouter()
for app_router in (
    clusters_router,
    flows_router,
    audit_router,
    failover_router,
    jobs_router,
    alerts_router,
    accounts_router,
    reports_router,
):
    router.registry.extend(app_router.registry)

# In this order a router's route wins over a plain view's of the same path, as when each app was mounted apart.
urlpatterns = [
    *router.urls,
    *cluster_read_urlpatterns,
    *group_reset_urlpatterns,
    *orchestration_urlpatterns,
    *monitoring_urlpatterns,
    *ui_urlpatterns,
    *demo_urlpatterns,
]
