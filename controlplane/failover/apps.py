from __future__ import annotations

from django.apps import AppConfig


class FailoverConfig(AppConfig):
    """The failover wizard's backend: a resumable state machine that moves consumer groups between clusters."""

    name = "controlplane.failover"
    label = "failover"
    verbose_name = "Failover"
