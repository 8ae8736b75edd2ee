"""Flow operations: the FlowConfig handed to the data plane, and pause/resume/restart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.db.models import F
from django.utils import timezone

from controlplane.clusters.models import Cluster
from controlplane.clusters.services import client_settings
from controlplane.flows.models import Flow
from replication.config import ClusterConfig, FlowConfig

_LIST_FIELDS = ("topics", "topics_exclude", "groups", "groups_exclude", "config_properties_exclude")
_SCALAR_FIELDS = (
    "enabled",
    "replication_policy_class",
    "replication_policy_separator",
    "sync_topic_configs_enabled",
    "sync_topic_configs_interval_seconds",
    "sync_topic_acls_enabled",
    "sync_topic_acls_interval_seconds",
    "refresh_topics_enabled",
    "refresh_topics_interval_seconds",
    "refresh_groups_interval_seconds",
    "emit_heartbeats_enabled",
    "emit_heartbeats_interval_seconds",
    "emit_checkpoints_enabled",
    "emit_checkpoints_interval_seconds",
    "sync_group_offsets_enabled",
    "sync_group_offsets_interval_seconds",
    "emit_offset_syncs_enabled",
    "offset_syncs_topic_location",
    "exactly_once",
    "tasks_max",
    "replication_factor",
    "offset_flush_interval_ms",
    "transaction_boundary_interval_ms",
    "record_handler_class",
    "abort_on_send_fail",
    "on_data_loss",
)
FLOW_PROPERTY_FIELDS = (*_SCALAR_FIELDS, *_LIST_FIELDS, "producer_overrides", "consumer_overrides")
# Not MM2 properties of their own: together they decide FlowConfig.facts_lake (see facts_lake()).
FACTS_FIELDS = ("facts_enabled", "facts_lake")


def flow_config(flow: Flow) -> FlowConfig:
    """The frozen value the data plane runs; it carries both clusters' client settings, passwords included."""
    return FlowConfig(
        source=ClusterConfig(flow.source.alias, client_settings(flow.source)),
        target=ClusterConfig(flow.target.alias, client_settings(flow.target)),
        **flow_properties(vars(flow)),
        facts_lake=facts_lake(flow),
    )


def default_facts_lake() -> str:
    """The control plane's facts lake: MIRRORPLANE_FACTS_LAKE, else <state dir>/lake (the reports read it)."""
    return str(settings.MIRRORPLANE_FACTS_LAKE or Path(settings.STATE_DIR) / "lake")


def facts_lake(flow: Flow) -> str:
    """Where the flow's tasks write replication facts; empty (off) when the flow or the setting disables them."""
    if not (settings.MIRRORPLANE_FACTS_ENABLED and flow.facts_enabled):
        return ""
    return flow.facts_lake or default_facts_lake()


def flow_properties(values: dict[str, Any]) -> dict[str, Any]:
    """FlowConfig keyword arguments from a flow's field values (a model's ``vars`` or validated data)."""
    # str(): a TextChoices member becomes its plain value, which is all replication/ should see.
    props: dict[str, Any] = {name: _plain(values[name]) for name in _SCALAR_FIELDS if name in values}
    props.update({name: tuple(values[name]) for name in _LIST_FIELDS if name in values})
    for name in ("producer_overrides", "consumer_overrides"):
        if name in values:
            props[name] = {str(k): str(v) for k, v in values[name].items()}
    return props


def cluster_config(cluster: Cluster) -> ClusterConfig:
    return ClusterConfig(cluster.alias, client_settings(cluster))


def pause(flow: Flow) -> None:
    flow.paused = True
    flow.save(update_fields=["paused", "updated_at"])


def resume(flow: Flow) -> None:
    flow.paused = False
    flow.save(update_fields=["paused", "updated_at"])


def restart(flow: Flow) -> None:
    """A new generation: the orchestration stops the flow's tasks and starts them again."""
    # An F() update, so two concurrent restarts make two generations.
    Flow.objects.filter(pk=flow.pk).update(generation=F("generation") + 1, updated_at=timezone.now())
    flow.refresh_from_db(fields=["generation", "updated_at"])


def _plain(value: Any) -> Any:
    return str(value) if isinstance(value, str) else value
