from __future__ import annotations

from rest_framework.routers import SimpleRouter

from controlplane.flows.api.views import FlowViewSet

router = SimpleRouter()
router.register("flows", FlowViewSet)

urlpatterns = router.urls
