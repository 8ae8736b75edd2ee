from __future__ import annotations

from rest_framework.routers import SimpleRouter

from controlplane.accounts.api.views import ApiTokenViewSet

router = SimpleRouter()
router.register("tokens", ApiTokenViewSet, basename="token")

urlpatterns = router.urls
