from __future__ import annotations

from rest_framework.routers import SimpleRouter

from controlplane.reports.api.views import ReportViewSet

router = SimpleRouter()
router.register("reports", ReportViewSet)
urlpatterns = router.urls
