from __future__ import annotations

from rest_framework.routers import SimpleRouter

from controlplane.failover.api.views import FailoverViewSet

router = SimpleRouter()
router.register("failovers", FailoverViewSet)

urlpatterns = router.urls
