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
from replication.config import PROPERTIES, ClusterConfig, FlowConfig

# Every FlowConfig property is a Flow field of the same name but facts.lake, which facts_enabled and facts_lake
# decide together (see facts_lake()). Scalars first, then lists and maps: the API's field order.
_FIELDS = [name for name in PROPERTIES if name != "facts_lake"]
FLOW_PROPERTY_FIELDS = tuple(sorted(_FIELDS, key=lambda name: PROPERTIES[name].kind in ("list", "map")))
# Field -> help. In the control plane an empty facts.lake means its own lake, not none (see facts_lake()).
FACTS_FIELDS = {
    "facts_enabled": "record replicated runs in the facts lake, which the latency and audit reports read",
    "facts_lake": "directory or Hadoop URI; empty: the control plane's lake",
}


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
    return {name: _plain(PROPERTIES[name].kind, values[name]) for name in FLOW_PROPERTY_FIELDS if name in values}


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


def _plain(kind: str, value: Any) -> Any:
    if kind == "list":
        return tuple(value)
    if kind == "map":
        return {str(k): str(v) for k, v in value.items()}
    # str(): a TextChoices member becomes its plain value, which is all replication/ should see.
    return str(value) if isinstance(value, str) else value
