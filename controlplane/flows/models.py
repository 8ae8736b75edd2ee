"""A replication flow: source cluster -> target cluster, with MirrorMaker 2's flow properties as fields.

Field names and defaults are FlowConfig's; its metadata (config.PROPERTIES) says which MM2 property each one is,
and test_flow_definition that these columns match it.
"""

from __future__ import annotations

from django.core.validators import MinValueValidator
from django.db import models

from controlplane.clusters.models import Cluster
from controlplane.flows import defaults as d
from controlplane.flows.choices import OffsetSyncsTopicLocation, OnDataLoss, ReplicationPolicyClass, UseDefaultsFrom

_POSITIVE = [MinValueValidator(0.001)]


def _enabled(name: str) -> models.BooleanField[bool, bool]:
    return models.BooleanField(default=d.flow_default(name))


def _seconds(name: str) -> models.FloatField[float, float]:
    return models.FloatField(default=d.flow_default(name), validators=_POSITIVE)


class Flow(models.Model):
    """One MM2 flow ``source->target``. ``paused`` and ``generation`` drive the orchestration:
    pause/resume flip ``paused``, restart increments ``generation``."""

    source = models.ForeignKey(Cluster, on_delete=models.PROTECT, related_name="outgoing_flows")
    target = models.ForeignKey(Cluster, on_delete=models.PROTECT, related_name="incoming_flows")
    enabled = models.BooleanField(default=True)
    paused = models.BooleanField(default=False)
    generation = models.PositiveIntegerField(default=0)

    topics = models.JSONField(default=d.default_topics)
    topics_exclude = models.JSONField(default=d.default_topics_exclude)
    groups = models.JSONField(default=d.default_groups)
    groups_exclude = models.JSONField(default=d.default_groups_exclude)
    replication_policy_class = models.CharField(
        max_length=64, choices=ReplicationPolicyClass.choices, default=ReplicationPolicyClass.DEFAULT
    )
    replication_policy_separator = models.CharField(
        max_length=16, default=d.flow_default("replication_policy_separator")
    )

    sync_topic_configs_enabled = _enabled("sync_topic_configs_enabled")
    sync_topic_configs_interval_seconds = _seconds("sync_topic_configs_interval_seconds")
    sync_topic_acls_enabled = _enabled("sync_topic_acls_enabled")
    sync_topic_acls_interval_seconds = _seconds("sync_topic_acls_interval_seconds")
    config_properties_exclude = models.JSONField(default=d.default_config_properties_exclude)
    use_defaults_from = models.CharField(max_length=8, choices=UseDefaultsFrom.choices, default=UseDefaultsFrom.TARGET)
    refresh_topics_enabled = _enabled("refresh_topics_enabled")
    refresh_topics_interval_seconds = _seconds("refresh_topics_interval_seconds")
    refresh_groups_interval_seconds = _seconds("refresh_groups_interval_seconds")
    emit_heartbeats_enabled = _enabled("emit_heartbeats_enabled")
    emit_heartbeats_interval_seconds = _seconds("emit_heartbeats_interval_seconds")
    emit_checkpoints_enabled = _enabled("emit_checkpoints_enabled")
    emit_checkpoints_interval_seconds = _seconds("emit_checkpoints_interval_seconds")
    sync_group_offsets_enabled = _enabled("sync_group_offsets_enabled")
    sync_group_offsets_interval_seconds = _seconds("sync_group_offsets_interval_seconds")
    emit_offset_syncs_enabled = _enabled("emit_offset_syncs_enabled")
    offset_syncs_topic_location = models.CharField(
        max_length=8, choices=OffsetSyncsTopicLocation.choices, default=OffsetSyncsTopicLocation.SOURCE
    )

    exactly_once = _enabled("exactly_once")
    tasks_max = models.PositiveIntegerField(default=d.flow_default("tasks_max"), validators=[MinValueValidator(1)])
    replication_factor = models.IntegerField(default=d.flow_default("replication_factor"))
    offset_flush_interval_ms = models.PositiveIntegerField(
        default=d.flow_default("offset_flush_interval_ms"), validators=[MinValueValidator(1)]
    )
    transaction_boundary_interval_ms = models.PositiveIntegerField(
        default=d.flow_default("transaction_boundary_interval_ms"), validators=[MinValueValidator(1)]
    )
    record_handler_class = models.CharField(max_length=255, blank=True, default="")
    abort_on_send_fail = _enabled("abort_on_send_fail")
    on_data_loss = models.CharField(max_length=8, choices=OnDataLoss.choices, default=OnDataLoss.FAIL)
    producer_overrides = models.JSONField(default=d.no_overrides, blank=True)
    consumer_overrides = models.JSONField(default=d.no_overrides, blank=True)
    # Replication facts for the analytics reports (replication.facts.writer): on by default, into the control plane's
    # lake unless the flow names its own. MIRRORPLANE_FACTS_ENABLED=false turns them off for every flow.
    facts_enabled = models.BooleanField(default=True)
    facts_lake = models.CharField(max_length=1024, blank=True, default="")

    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["source__alias", "target__alias"]
        constraints = [
            models.UniqueConstraint(fields=["source", "target"], name="flow_unique_source_target"),
            models.CheckConstraint(condition=~models.Q(source=models.F("target")), name="flow_source_is_not_target"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def name(self) -> str:
        """MM2's flow name, ``source->target``."""
        return f"{self.source.alias}->{self.target.alias}"
