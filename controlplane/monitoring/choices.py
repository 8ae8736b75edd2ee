from __future__ import annotations

from django.db import models


class Health(models.TextChoices):
    """A flow's health as the graph colours it, worst last."""

    HEALTHY = "healthy", "Healthy"
    DISABLED = "disabled", "Disabled"
    PAUSED = "paused", "Paused"
    STARTING = "starting", "Starting"
    LAGGING = "lagging", "Lagging"
    FAILING = "failing", "Failing"


UNHEALTHY = frozenset({Health.STARTING, Health.LAGGING, Health.FAILING})
