from __future__ import annotations

from django.apps import AppConfig


class ReportsConfig(AppConfig):
    name = "controlplane.reports"
    label = "reports"
    verbose_name = "Analytics reports"
    default_auto_field = "django.db.models.BigAutoField"
