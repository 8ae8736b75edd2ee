from __future__ import annotations

from rest_framework.routers import SimpleRouter

from controlplane.clusters.api.views import ClusterViewSet

router = SimpleRouter()
router.register("clusters", ClusterViewSet)

urlpatterns = router.urls
