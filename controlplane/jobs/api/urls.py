from __future__ import annotations

from rest_framework.routers import SimpleRouter

from controlplane.jobs.api.views import JobViewSet

router = SimpleRouter()
router.register("jobs", JobViewSet)

urlpatterns = router.urls
