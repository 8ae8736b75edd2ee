from __future__ import annotations

from django.apps import AppConfig


class AuditConfig(AppConfig):
    """The audit log: who changed or operated what, when, with the values before and after."""

    name = "controlplane.audit"
    label = "audit"
    verbose_name = "Audit log"
