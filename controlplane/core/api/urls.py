"""Routes of the version 1 REST API: one router per app, merged into this one so the API root lists them all."""

from __future__ import annotations

from rest_framework.routers import DefaultRouter

from controlplane.audit.api.urls import router as audit_router
from controlplane.clusters.api.urls import router as clusters_router
from controlplane.failover.api.urls import router as failover_router
from controlplane.flows.api.urls import router as flows_router
from controlplane.jobs.api.urls import router as jobs_router

router = DefaultRouter()
for app_router in (clusters_router, flows_router, audit_router, failover_router, jobs_router):
    router.registry.extend(app_router.registry)

urlpatterns = router.urls
