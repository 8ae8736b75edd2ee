from __future__ import annotations

from rest_framework.routers import SimpleRouter

from controlplane.audit.api.views import AuditRecordViewSet

router = SimpleRouter()
router.register("audit", AuditRecordViewSet)

urlpatterns = router.urls
