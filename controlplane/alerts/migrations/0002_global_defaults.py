"""The global default rules, one per kind: editable and disableable through /api/v1/alert-rules/."""

from __future__ import annotations

from typing import Any

from django.db import migrations

DEFAULTS = [
    # kind, threshold, for_seconds. Lag: the graph's amber line (monitoring.services.health.LAGGING_RECORDS).
    ("lag_records", 10_000.0, 60),
    ("latency_p99", 5_000.0, 120),
    ("task_not_running", 0.0, 60),
    ("data_loss", 0.0, 0),
    ("cluster_unreachable", 0.0, 60),
]


def create(apps: Any, schema_editor: Any) -> None:
    rule = apps.get_model("alerts", "AlertRule")
    for kind, threshold, for_seconds in DEFAULTS:
        rule.objects.get_or_create(kind=kind, flow=None, defaults={"threshold": threshold, "for_seconds": for_seconds})


def remove(apps: Any, schema_editor: Any) -> None:
    apps.get_model("alerts", "AlertRule").objects.filter(flow=None).delete()


class Migration(migrations.Migration):
    dependencies = [("alerts", "0001_initial")]
    operations = [migrations.RunPython(create, remove)]
