"""The broker-health kinds (under-replicated, offline and under-min-ISR partitions, brokers down), each with a
global default rule: above 0 for 60 s."""

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
    ("under_replicated", "Under-replicated partitions"),
    ("offline_partitions", "Offline partitions"),
    ("under_min_isr", "Partitions under min.insync.replicas"),
    ("brokers_down", "Brokers down"),
]
NEW = ["under_replicated", "offline_partitions", "under_min_isr", "brokers_down"]


def create(apps: Any, schema_editor: Any) -> None:
    rule = apps.get_model("alerts", "AlertRule")
    for kind in NEW:
        rule.objects.get_or_create(kind=kind, flow=None, defaults={"threshold": 0.0, "for_seconds": 60})


def remove(apps: Any, schema_editor: Any) -> None:
    apps.get_model("alerts", "AlertRule").objects.filter(kind__in=NEW, flow=None).delete()


class Migration(migrations.Migration):
    dependencies = [("alerts", "0003_checkpoint_age")]
    operations = [
        migrations.AlterField(model_name="alert", name="kind", field=models.CharField(choices=KINDS, max_length=32)),
        migrations.AlterField(
            model_name="alertrule", name="kind", field=models.CharField(choices=KINDS, max_length=32)
        ),
        migrations.RunPython(create, remove),
    ]
