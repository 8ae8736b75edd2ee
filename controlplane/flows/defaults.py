"""Field defaults taken from FlowConfig, so the model and the data plane share one set of MM2 defaults.

Module-level functions because migrations serialise JSONField defaults by reference.
"""

from __future__ import annotations

from typing import Any

from replication.config import PROPERTIES


def flow_default(name: str) -> Any:
    """FlowConfig's default for a scalar field."""
    return PROPERTIES[name].default


def default_topics() -> list[str]:
    return list(flow_default("topics"))


def default_topics_exclude() -> list[str]:
    return list(flow_default("topics_exclude"))


def default_groups() -> list[str]:
    return list(flow_default("groups"))


def default_groups_exclude() -> list[str]:
    return list(flow_default("groups_exclude"))


def default_config_properties_exclude() -> list[str]:
    return list(flow_default("config_properties_exclude"))


def no_overrides() -> dict[str, str]:
    return {}
