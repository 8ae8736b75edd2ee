"""FlowConfig: everything one replication flow (source -> target) needs, as a frozen plain value.

Field names are MM2 property names with '.' and '-' turned into '_' (`topics.exclude` -> `topics_exclude`).
The control plane builds this from a Flow row; the standalone CLI builds it from an MM2 properties file.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from replication.policy import (
    DefaultReplicationPolicy,
    IdentityReplicationPolicy,
    PolicyError,
    ReplicationPolicy,
    validate_alias,
    validate_separator,
)

DEFAULT_TOPICS_EXCLUDE = (r".*[\-\.]internal", r".*\.replica", r"__.*")
DEFAULT_GROUPS_EXCLUDE = (r"console-consumer-.*", r"connect-.*", r"__.*")
DEFAULT_CONFIG_PROPERTIES_EXCLUDE = (
    r"follower\.replication\.throttled\.replicas",
    r"leader\.replication\.throttled\.replicas",
    r"message\.timestamp\.difference\.max\.ms",
    r"message\.timestamp\.type",
    r"unclean\.leader\.election\.enable",
    r"min\.insync\.replicas",
)
POLICIES = {
    "DefaultReplicationPolicy": "default",
    "org.apache.kafka.connect.mirror.DefaultReplicationPolicy": "default",
    "IdentityReplicationPolicy": "identity",
    "org.apache.kafka.connect.mirror.IdentityReplicationPolicy": "identity",
}


class ConfigError(ValueError):
    """A flow property that is unknown or malformed; the message starts with the property's MM2 name."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"{name}: {reason}")
        self.property_name = name
        self.reason = reason


def compile_patterns(name: str, patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One anchored regex from MM2's comma-separated list; ConfigError names the property when one is invalid."""
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ConfigError(name, f"invalid regular expression {pattern!r}: {exc}") from None
    if not patterns:
        return re.compile(r"(?!)")  # matches nothing
    return re.compile("|".join(f"(?:{p})" for p in patterns))


@dataclass(frozen=True)
class ClusterConfig:
    """A cluster alias and its librdkafka client settings (`bootstrap.servers`, security, ...)."""

    alias: str
    client: Mapping[str, str]

    @property
    def bootstrap_servers(self) -> str:
        return self.client["bootstrap.servers"]


@dataclass(frozen=True)
class FlowConfig:
    """One replication flow `source->target` with MM2 property semantics and defaults."""

    source: ClusterConfig
    target: ClusterConfig
    enabled: bool = True
    topics: tuple[str, ...] = (".*",)
    topics_exclude: tuple[str, ...] = DEFAULT_TOPICS_EXCLUDE
    groups: tuple[str, ...] = (".*",)
    groups_exclude: tuple[str, ...] = DEFAULT_GROUPS_EXCLUDE
    replication_policy_class: str = "DefaultReplicationPolicy"
    replication_policy_separator: str = "."
    sync_topic_configs_enabled: bool = True
    sync_topic_configs_interval_seconds: float = 600.0
    sync_topic_acls_enabled: bool = True
    sync_topic_acls_interval_seconds: float = 600.0
    config_properties_exclude: tuple[str, ...] = DEFAULT_CONFIG_PROPERTIES_EXCLUDE
    refresh_topics_enabled: bool = True
    refresh_topics_interval_seconds: float = 600.0
    refresh_groups_interval_seconds: float = 600.0
    emit_heartbeats_enabled: bool = True
    emit_heartbeats_interval_seconds: float = 1.0
    emit_checkpoints_enabled: bool = True
    emit_checkpoints_interval_seconds: float = 5.0
    sync_group_offsets_enabled: bool = False
    sync_group_offsets_interval_seconds: float = 5.0
    emit_offset_syncs_enabled: bool = True
    offset_syncs_topic_location: str = "source"
    exactly_once: bool = False
    tasks_max: int = 1
    replication_factor: int = -1  # -1: the target broker's default.replication.factor
    offset_flush_interval_ms: int = 1000
    transaction_boundary_interval_ms: int = 100  # exactly-once: how long one transaction collects records (KIP-618)
    record_handler_class: str = ""  # "module:Class" of a RecordHandler that filters/transforms records (KIP-3)
    abort_on_send_fail: bool = True
    on_data_loss: str = "fail"  # fail: stop the task; continue: report loudly, then resume at the log start
    facts_lake: str = ""  # facts.lake: directory or URI for replication facts (replication.facts); empty: off
    producer_overrides: Mapping[str, str] = field(default_factory=dict)
    consumer_overrides: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        validate_flow(self)

    @property
    def name(self) -> str:
        """MM2's flow name, `source->target`."""
        return f"{self.source.alias}->{self.target.alias}"

    def policy(self) -> ReplicationPolicy:
        if POLICIES[self.replication_policy_class] == "identity":
            return IdentityReplicationPolicy(self.source.alias, self.replication_policy_separator)
        return DefaultReplicationPolicy(self.replication_policy_separator)

    def replace(self, **changes: Any) -> FlowConfig:
        return dataclasses.replace(self, **changes)


def validate_flow(flow: FlowConfig) -> None:
    """Raise ConfigError naming the first property that is wrong."""
    sep = flow.replication_policy_separator
    _policy_rule("replication.policy.separator", lambda: validate_separator(sep))
    _policy_rule("source.cluster.alias", lambda: validate_alias(flow.source.alias, sep))
    _policy_rule("target.cluster.alias", lambda: validate_alias(flow.target.alias, sep))
    if flow.source.alias == flow.target.alias:
        raise ConfigError("target.cluster.alias", "source and target must be different clusters")
    for alias, cluster in (("source", flow.source), ("target", flow.target)):
        if not cluster.client.get("bootstrap.servers"):
            raise ConfigError(f"{cluster.alias}.bootstrap.servers", f"missing for the {alias} cluster")
    if flow.replication_policy_class not in POLICIES:
        raise ConfigError("replication.policy.class", f"unknown policy {flow.replication_policy_class!r}")
    for name in ("topics", "topics.exclude", "groups", "groups.exclude", "config.properties.exclude"):
        compile_patterns(name, getattr(flow, name.replace(".", "_")))
    if flow.offset_syncs_topic_location not in ("source", "target"):
        raise ConfigError("offset-syncs.topic.location", "must be 'source' or 'target'")
    if flow.on_data_loss not in ("fail", "continue"):
        raise ConfigError("on.data.loss", "must be 'fail' or 'continue'")
    if flow.tasks_max < 1:
        raise ConfigError("tasks.max", "must be at least 1")
    for name in _POSITIVE_INTERVALS:
        if getattr(flow, name) <= 0:
            raise ConfigError(name.replace("_", "."), "must be greater than 0")
    for name, maximum in MAX_INTERVALS_MS.items():
        if getattr(flow, name) > maximum:
            raise ConfigError(name.replace("_", "."), f"must be at most {maximum}")


# Upper bounds of the millisecond properties. A transaction must commit well inside the producer's
# transaction.timeout.ms (clients.TRANSACTION_TIMEOUT_MS, 60 s) or the broker aborts it; offsets are flushed at
# least weekly, like the longest interval in seconds the control plane takes.
MAX_INTERVALS_MS = {
    "offset_flush_interval_ms": 7 * 24 * 3600 * 1000,
    "transaction_boundary_interval_ms": 30_000,
}

_POSITIVE_INTERVALS = (
    "sync_topic_configs_interval_seconds",
    "sync_topic_acls_interval_seconds",
    "refresh_topics_interval_seconds",
    "refresh_groups_interval_seconds",
    "emit_heartbeats_interval_seconds",
    "emit_checkpoints_interval_seconds",
    "sync_group_offsets_interval_seconds",
    "offset_flush_interval_ms",
    "transaction_boundary_interval_ms",
)


def _policy_rule(name: str, rule: Any) -> None:
    try:
        rule()
    except PolicyError as exc:
        raise ConfigError(name, str(exc).split(": ", 1)[-1]) from None
