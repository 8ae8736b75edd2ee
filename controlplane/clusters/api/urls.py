from __future__ import annotations

from rest_framework.routers import SimpleRouter

from controlplane.clusters.api.groupreset import GroupResetViewSet
from controlplane.clusters.api.views import ClusterViewSet

router = SimpleRouter()
router.register("clusters", ClusterViewSet)

# A consumer group's offsets reset, under clusters/<id>/; kept out of the merged router, as the cluster browser is.
_reset = SimpleRouter()
_reset.register("clusters", GroupResetViewSet, basename="cluster-group-reset")
group_reset_urlpatterns = _reset.urls

urlpatterns = router.urls + group_reset_urlpatterns
