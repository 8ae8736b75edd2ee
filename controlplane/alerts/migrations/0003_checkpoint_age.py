"""The checkpoint_age kind: an alert per flow and consumer group (its group stored, its subject long enough for
``flow:<id>:group:<group>``), and its global default rule: 600 s for 120 s."""

from __future__ import annotations

from typing import Any

from django.db import migrations, models

KINDS = [
    ("lag_records", "Replication lag (records)"),
    ("latency_p99", "p99 replication latency (ms)"),
    ("task_not_running", "Tasks not running (unplaced, failed, lease lost)"),
    ("data_loss", "Data loss reported (records)"),
    ("cluster_unreachable", "Cluster unreachable"),
    ("checkpoint_age", "Checkpoint age (s)"),
]


def create(apps: Any, schema_editor: Any) -> None:
    rule = apps.get_model("alerts", "AlertRule")
    rule.objects.get_or_create(kind="checkpoint_age", flow=None, defaults={"threshold": 600.0, "for_seconds": 120})


def remove(apps: Any, schema_editor: Any) -> None:
    apps.get_model("alerts", "AlertRule").objects.filter(kind="checkpoint_age", flow=None).delete()


class Migration(migrations.Migration):
    dependencies = [("alerts", "0002_global_defaults")]
    operations = [
        migrations.AddField(
            model_name="alert",
            name="group",
            field=models.TextField(blank=True, default="", help_text="the consumer group (checkpoint age), else empty"),
        ),
        migrations.AlterField(model_name="alert", name="kind", field=models.CharField(choices=KINDS, max_length=32)),
        migrations.AlterField(
            model_name="alert",
            name="subject",
            field=models.CharField(
                help_text="flow:<id>, flow:<id>:group:<consumer group> (checkpoint age) or cluster:<id>",
                max_length=255,
            ),
        ),
        migrations.AlterField(
            model_name="alertrule", name="kind", field=models.CharField(choices=KINDS, max_length=32)
        ),
        migrations.RunPython(create, remove),
    ]
