"""FlowConfig: everything one replication flow (source -> target) needs, as a frozen plain value.

Each field's metadata is the MM2 property it is (`Property`: name, help, bounds); PROPERTIES lists them all.
The control plane builds this from a Flow row; the standalone CLI builds it from an MM2 properties file.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, get_origin, get_type_hints

# ConfigError, compile_patterns, POLICIES and replication_policy are MM2's vocabulary, defined in mm2 and named
# here too, where the control plane reads a flow's config.
from replication.mm2.filters import compile_patterns as compile_patterns
from replication.mm2.policy import POLICIES as POLICIES
from replication.mm2.policy import PolicyError, ReplicationPolicy, validate_alias, validate_separator
from replication.mm2.policy import replication_policy as replication_policy
from replication.mm2.properties import ConfigError as ConfigError

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


@dataclass(frozen=True)
class ClusterConfig:
    """A cluster alias and its librdkafka client settings (`bootstrap.servers`, security, ...)."""

    alias: str
    client: Mapping[str, str]

    @property
    def bootstrap_servers(self) -> str:
        return self.client["bootstrap.servers"]


@dataclass(frozen=True)
class Property:
    """A FlowConfig field as MM2 properties files name it, what it means, and the values it takes.

    The one definition of a flow property: the control plane's serializer, form and MM2 import and export read it.
    """

    name: str  # the MM2 property name: `sync.group.offsets.interval.seconds`
    help: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    field: str = ""  # FlowConfig's field, filled in by PROPERTIES ...
    kind: str = ""  # ... and its kind, from the annotation: bool, int, float, str, list (of regexes) or map
    default: Any = None


def _mm2(name: str, default: Any, help: str, **values: Any) -> Any:
    """A FlowConfig field that is the MM2 property ``name``."""
    metadata = {"property": Property(name, help, **values)}
    if isinstance(default, dict):
        return field(default_factory=dict, metadata=metadata)
    return field(default=default, metadata=metadata)


def _seconds(name: str, default: float, help: str) -> Any:
    # At most a week, the bound the control plane's API has always had.
    return _mm2(name, default, help, minimum=0.001, maximum=7 * 24 * 3600.0)


@dataclass(frozen=True)
class FlowConfig:
    """One replication flow `source->target` with MM2 property semantics and defaults."""

    source: ClusterConfig
    target: ClusterConfig
    enabled: bool = _mm2("enabled", True, "replicate this flow")
    topics: tuple[str, ...] = _mm2("topics", (".*",), "regular expressions of the source topics to replicate")
    topics_exclude: tuple[str, ...] = _mm2(
        "topics.exclude", DEFAULT_TOPICS_EXCLUDE, "regular expressions of source topics never replicated"
    )
    groups: tuple[str, ...] = _mm2("groups", (".*",), "regular expressions of the consumer groups to checkpoint")
    groups_exclude: tuple[str, ...] = _mm2(
        "groups.exclude", DEFAULT_GROUPS_EXCLUDE, "regular expressions of consumer groups never checkpointed"
    )
    replication_policy_class: str = _mm2(
        "replication.policy.class",
        "DefaultReplicationPolicy",
        "how remote topics are named: Default prefixes the source alias, Identity keeps the topic's name",
        choices=tuple(POLICIES),
    )
    replication_policy_separator: str = _mm2(
        "replication.policy.separator", ".", "between the source alias and the topic in a remote topic's name"
    )
    sync_topic_configs_enabled: bool = _mm2(
        "sync.topic.configs.enabled", True, "copy the source topics' configs to the remote topics"
    )
    sync_topic_configs_interval_seconds: float = _seconds(
        "sync.topic.configs.interval.seconds", 600.0, "seconds between topic config syncs"
    )
    sync_topic_acls_enabled: bool = _mm2("sync.topic.acls.enabled", True, "copy the source topics' ACLs")
    sync_topic_acls_interval_seconds: float = _seconds(
        "sync.topic.acls.interval.seconds", 600.0, "seconds between topic ACL syncs"
    )
    config_properties_exclude: tuple[str, ...] = _mm2(
        "config.properties.exclude",
        DEFAULT_CONFIG_PROPERTIES_EXCLUDE,
        "regular expressions of topic configs never synced",
    )
    use_defaults_from: str = _mm2(
        "use.defaults.from",
        "target",
        "for a config the source topic leaves at its default: source copies the source's default to the remote "
        "topic, target leaves the target's default",
        choices=("source", "target"),
    )
    refresh_topics_enabled: bool = _mm2("refresh.topics.enabled", True, "look for new source topics")
    refresh_topics_interval_seconds: float = _seconds(
        "refresh.topics.interval.seconds", 600.0, "seconds between looks for new source topics"
    )
    refresh_groups_interval_seconds: float = _seconds(
        "refresh.groups.interval.seconds", 600.0, "seconds between looks for new consumer groups"
    )
    emit_heartbeats_enabled: bool = _mm2("emit.heartbeats.enabled", True, "emit heartbeats to the target")
    emit_heartbeats_interval_seconds: float = _seconds(
        "emit.heartbeats.interval.seconds", 1.0, "seconds between heartbeats"
    )
    emit_checkpoints_enabled: bool = _mm2(
        "emit.checkpoints.enabled", True, "emit checkpoints: the consumer groups' offsets, translated for the target"
    )
    emit_checkpoints_interval_seconds: float = _seconds(
        "emit.checkpoints.interval.seconds", 5.0, "seconds between checkpoints"
    )
    sync_group_offsets_enabled: bool = _mm2(
        "sync.group.offsets.enabled", False, "commit the checkpointed offsets of groups not active in the target"
    )
    sync_group_offsets_interval_seconds: float = _seconds(
        "sync.group.offsets.interval.seconds", 5.0, "seconds between group offset syncs"
    )
    emit_offset_syncs_enabled: bool = _mm2(
        "emit.offset-syncs.enabled", True, "emit offset syncs, which checkpoints and offset translation need"
    )
    offset_syncs_topic_location: str = _mm2(
        "offset-syncs.topic.location",
        "source",
        "the cluster whose offset syncs topic this flow writes",
        choices=("source", "target"),
    )
    exactly_once: bool = _mm2("exactly.once", False, "copy each record once, in transactions (KIP-618)")
    tasks_max: int = _mm2("tasks.max", 1, "the most tasks that share the flow's partitions", minimum=1, maximum=1024)
    replication_factor: int = _mm2(
        "replication.factor",
        -1,
        "replication factor of the remote topics it creates; -1: the target broker's default",
        minimum=-1,
        maximum=32767,
    )
    # Offsets are flushed at least weekly, like the longest interval in seconds. A transaction must commit well
    # inside the producer's transaction.timeout.ms (clients.TRANSACTION_TIMEOUT_MS, 60 s) or the broker aborts it.
    offset_flush_interval_ms: int = _mm2(
        "offset.flush.interval.ms",
        1000,
        "milliseconds between commits of the replicated position",
        minimum=1,
        maximum=7 * 24 * 3600 * 1000,
    )
    transaction_boundary_interval_ms: int = _mm2(
        "transaction.boundary.interval.ms",
        100,
        "exactly-once: milliseconds one transaction collects records",
        minimum=1,
        maximum=30_000,
    )
    record_handler_class: str = _mm2(
        "record.handler.class", "", "a RecordHandler (module:Class) that filters or transforms records (KIP-3)"
    )
    abort_on_send_fail: bool = _mm2(
        "abort.on.send.fail", True, "stop the task when a record cannot be delivered to the target"
    )
    on_data_loss: str = _mm2(
        "on.data.loss",
        "fail",
        "fail: stop the task; continue: report loudly, then resume at the log start",
        choices=("fail", "continue"),
    )
    facts_lake: str = _mm2("facts.lake", "", "directory or URI for replication facts (replication.facts); empty: off")
    producer_overrides: Mapping[str, str] = _mm2("producer", {}, "librdkafka settings of the producer to the target")
    consumer_overrides: Mapping[str, str] = _mm2("consumer", {}, "librdkafka settings of the consumer of the source")

    def __post_init__(self) -> None:
        validate_flow(self)

    @property
    def name(self) -> str:
        """MM2's flow name, `source->target`."""
        return f"{self.source.alias}->{self.target.alias}"

    def policy(self) -> ReplicationPolicy:
        return replication_policy(self.replication_policy_class, self.source.alias, self.replication_policy_separator)

    def replace(self, **changes: Any) -> FlowConfig:
        return dataclasses.replace(self, **changes)


def _properties() -> dict[str, Property]:
    hints = get_type_hints(FlowConfig)
    kinds = {bool: "bool", int: "int", float: "float", str: "str"}
    properties = {}
    for f in dataclasses.fields(FlowConfig):
        if "property" in f.metadata:
            hint = hints[f.name]
            kind = kinds.get(hint) or ("list" if get_origin(hint) is tuple else "map")
            default = f.default_factory() if callable(f.default_factory) else f.default
            properties[f.name] = dataclasses.replace(f.metadata["property"], field=f.name, kind=kind, default=default)
    return properties


PROPERTIES: dict[str, Property] = _properties()  # FlowConfig field -> its MM2 property, in FlowConfig's order


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
    for prop in PROPERTIES.values():
        check_value(prop, getattr(flow, prop.field))


def check_value(prop: Property, value: Any) -> None:
    """Raise ConfigError naming ``prop`` when ``value`` breaks its own rule (regexes, choices, bounds)."""
    if prop.kind == "list":
        compile_patterns(prop.name, value)
    elif prop.choices and value not in prop.choices:
        raise ConfigError(prop.name, f"{value!r} is not one of {', '.join(prop.choices)}")
    elif prop.minimum is not None and value < prop.minimum:
        raise ConfigError(prop.name, f"must be at least {prop.minimum}")
    elif prop.maximum is not None and value > prop.maximum:
        raise ConfigError(prop.name, f"must be at most {prop.maximum}")


def _policy_rule(name: str, rule: Any) -> None:
    try:
        rule()
    except PolicyError as exc:
        raise ConfigError(name, str(exc).split(": ", 1)[-1]) from None
