"""The composition root of the version 1 REST API: one router per app, merged here so the API root lists them all.

It lives beside settings.py and urls.py, above every app, so no app imports the others through it."""

from __future__ import annotations

from rest_framework.routers import DefaultRouter

from controlplane.accounts.api.urls import router as accounts_router
from controlplane.alerts.api.urls import router as alerts_router
from controlplane.audit.api.urls import router as audit_router
from controlplane.clusters.api.urls import group_reset_urlpatterns
from controlplane.clusters.api.urls import router as clusters_router
from controlplane.failover.api.urls import router as failover_router
from controlplane.flows.api.urls import cluster_read_urlpatterns
from controlplane.flows.api.urls import router as flows_router
from controlplane.jobs.api.urls import router as jobs_router

router = DefaultRouter()
for app_router in (
    clusters_router,
    flows_router,
    audit_router,
    failover_router,
    jobs_router,
    alerts_router,
    accounts_router,
):
    router.registry.extend(app_router.registry)

urlpatterns = router.urls + cluster_read_urlpatterns + group_reset_urlpatterns
