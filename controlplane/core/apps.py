from __future__ import annotations

from django.apps import AppConfig


class CoreConfig(AppConfig):
    """The control plane's shared pieces: health check, placeholder UI, demo command."""

    name = "controlplane.core"
    label = "core"
    verbose_name = "Mirrorplane core"
