from __future__ import annotations

from django.apps import AppConfig


class DemoConfig(AppConfig):
    """The composition of a running demo: `manage.py demo` (local clusters, worker, beat, web), its seed data and
    its traffic generator's pause switch."""

    name = "controlplane.demo"
    label = "demo"
    verbose_name = "Mirrorplane demo"
