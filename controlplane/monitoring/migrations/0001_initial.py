"""The monitoring models come from the ui app with their rows: this takes them over in Django's state only, on their
ui_ tables, and 0002 renames the tables. The dependency on ui's 0001 is history only; no code of ui is imported."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("clusters", "0001_initial"),
        ("flows", "0001_initial"),
        ("ui", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="ClusterObservation",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("at", models.DateTimeField()),
                        ("reachable", models.BooleanField(default=False)),
                        ("error", models.TextField(blank=True, default="")),
                        ("topic_count", models.IntegerField(blank=True, null=True)),
                        (
                            "upstream_hops",
                            models.JSONField(
                                default=dict, help_text="upstream alias -> fewest hops, from heartbeat topics"
                            ),
                        ),
                        (
                            "heartbeats",
                            models.JSONField(
                                default=dict, help_text="heartbeat topic -> newest heartbeat timestamp (ms)"
                            ),
                        ),
                        (
                            "cluster",
                            models.OneToOneField(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="observation",
                                to="clusters.cluster",
                            ),
                        ),
                    ],
                    options={"db_table": "ui_clusterobservation"},
                ),
                migrations.CreateModel(
                    name="FlowObservation",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("at", models.DateTimeField()),
                        ("error", models.TextField(blank=True, default="")),
                        (
                            "checkpoints",
                            models.JSONField(default=dict, help_text="group -> {timestamp (ms), partitions}"),
                        ),
                        (
                            "flow",
                            models.OneToOneField(
                                on_delete=django.db.models.deletion.CASCADE, related_name="observation", to="flows.flow"
                            ),
                        ),
                    ],
                    options={"db_table": "ui_flowobservation"},
                ),
                migrations.CreateModel(
                    name="FlowSample",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("at", models.DateTimeField(db_index=True)),
                        (
                            "records",
                            models.BigIntegerField(
                                default=0, help_text="records replicated by the running tasks (cumulative)"
                            ),
                        ),
                        ("records_per_second", models.FloatField(default=0.0)),
                        (
                            "lag",
                            models.BigIntegerField(
                                blank=True, help_text="source records not yet replicated", null=True
                            ),
                        ),
                        ("latency_p99_ms", models.FloatField(blank=True, null=True)),
                        (
                            "health",
                            models.CharField(
                                choices=[
                                    ("healthy", "Healthy"),
                                    ("disabled", "Disabled"),
                                    ("paused", "Paused"),
                                    ("starting", "Starting"),
                                    ("lagging", "Lagging"),
                                    ("failing", "Failing"),
                                ],
                                max_length=16,
                            ),
                        ),
                        (
                            "flow",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE, related_name="samples", to="flows.flow"
                            ),
                        ),
                    ],
                    options={
                        "db_table": "ui_flowsample",
                        "ordering": ["at"],
                        "indexes": [models.Index(fields=["flow", "at"], name="flowsample_flow_at")],
                    },
                ),
            ],
        ),
    ]
