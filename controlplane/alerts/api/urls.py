from __future__ import annotations

from rest_framework.routers import SimpleRouter

from controlplane.alerts.api.views import AlertRuleViewSet, AlertViewSet, SilenceViewSet, WebhookTargetViewSet

router = SimpleRouter()
router.register("alerts", AlertViewSet)
router.register("alert-rules", AlertRuleViewSet)
router.register("alert-webhooks", WebhookTargetViewSet)
router.register("alert-silences", SilenceViewSet)
