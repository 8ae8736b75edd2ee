from __future__ import annotations

from rest_framework.routers import DefaultRouter

from controlplane.reports.api.views import ReportViewSet

router = DefaultRouter()
router.register("reports", ReportViewSet)
urlpatterns = router.urls
