"""Field defaults taken from FlowConfig, so the model and the data plane share one set of MM2 defaults.

Module-level functions because migrations serialise JSONField defaults by reference.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from replication.config import FlowConfig

_DEFAULTS: dict[str, Any] = {
    f.name: f.default for f in dataclasses.fields(FlowConfig) if f.default is not dataclasses.MISSING
}


def flow_default(name: str) -> Any:
    """FlowConfig's default for a scalar field."""
    return _DEFAULTS[name]


def default_topics() -> list[str]:
    return list(_DEFAULTS["topics"])


def default_topics_exclude() -> list[str]:
    return list(_DEFAULTS["topics_exclude"])


def default_groups() -> list[str]:
    return list(_DEFAULTS["groups"])


def default_groups_exclude() -> list[str]:
    return list(_DEFAULTS["groups_exclude"])


def default_config_properties_exclude() -> list[str]:
    return list(_DEFAULTS["config_properties_exclude"])


def no_overrides() -> dict[str, str]:
    return {}
