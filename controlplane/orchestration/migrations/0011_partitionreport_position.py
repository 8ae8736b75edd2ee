"""PartitionReport.position: copied out of the snapshot (its fourth value) for every stored row, so an idle
partition, whose row is not written again, is in its flow's sum of positions from the start."""

from __future__ import annotations

from typing import Any

from django.db import migrations, models

BATCH = 1000


def copy_positions(apps: Any, schema_editor: Any) -> None:
    reports = apps.get_model("orchestration", "PartitionReport")
    changed = []
    for row in reports.objects.only("pk", "snapshot").iterator(chunk_size=BATCH):
        values = row.snapshot
        if isinstance(values, list) and len(values) > 3 and values[3] is not None:
            row.position = int(values[3])
            changed.append(row)
        if len(changed) >= BATCH:
            reports.objects.bulk_update(changed, ["position"])
            changed = []
    reports.objects.bulk_update(changed, ["position"])


class Migration(migrations.Migration):
    dependencies = [("orchestration", "0010_controller_run")]

    operations = [
        migrations.AddField(
            model_name="partitionreport",
            name="position",
            field=models.BigIntegerField(
                blank=True,
                help_text="the next source offset to replicate, copied out of the snapshot: summed per flow for its "
                "rates",
                null=True,
            ),
        ),
        migrations.RunPython(copy_positions, migrations.RunPython.noop),
    ]
