"""MirrorMaker 2 properties files (KIP-382's `mm2.properties`) to and from FlowConfigs, so users can port configs.

    clusters = us-west, us-east
    us-west.bootstrap.servers = host1:9092          # any librdkafka client setting of the cluster
    us-east.producer.linger.ms = 10                 # producer of every flow whose target is us-east
    us-west.consumer.fetch.min.bytes = 1            # consumer of every flow whose source is us-west
    consumer.isolation.level = read_committed       # consumer of every flow (a cluster's or a flow's own wins)
    tasks.max = 2                                   # a flow property for every flow ...
    us-west->us-east.enabled = true
    us-west->us-east.tasks.max = 4                  # ... and for one flow, which wins
    us-east.exactly.once.source.support = enabled   # a Connect worker key: the flows into us-east
    offset.lag.max = 100                            # MM2's, without effect here: accepted and logged

Property names are those of FlowConfig's field metadata (config.PROPERTIES).
Every error is a ConfigError naming the property as it was written.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import re
from collections.abc import Iterator, Mapping, Sequence
from os import PathLike
from typing import Any

from replication.config import PROPERTIES, ClusterConfig, ConfigError, FlowConfig, Property, check_value
from replication.config.clientsettings import settings_error
from replication.mm2 import hosts
from replication.mm2.properties import parse_properties, property_line

# MM2 property name -> its Property, for every flow property but the producer and consumer overrides (those are
# client settings with a prefix, read and written apart).
_NAMED: dict[str, Property] = {prop.name: prop for prop in PROPERTIES.values() if prop.kind != "map"}

# Older spellings found in real files: MM2's pre-2.6 `*.blacklist`, KIP-382's draft names without `.enabled`, and
# `emit.offset.syncs.enabled`, which Mirrorplane wrote before it used MM2's own `emit.offset-syncs.enabled`.
LEGACY_NAMES = {
    "emit.offset.syncs.enabled": "emit.offset-syncs.enabled",
    "topics.blacklist": "topics.exclude",
    "groups.blacklist": "groups.exclude",
    "emit.heartbeats": "emit.heartbeats.enabled",
    "emit.checkpoints": "emit.checkpoints.enabled",
    "sync.topic.configs": "sync.topic.configs.enabled",
    "sync.topic.acls": "sync.topic.acls.enabled",
    "refresh.topics": "refresh.topics.enabled",
}

# Keys of MM2 or of its Connect runtime that change nothing in Mirrorplane: accepted globally, per cluster or per
# flow, each logged once as written with the reason here, and its value checked (`int` or `str`). Mirrorplane runs
# no Connect worker and takes no internal-topic sizing from a flow's properties; refusing these would make porting
# a chore. Anything neither here nor mapped (FlowConfig, WORKER_PROPERTIES, the cluster's client settings) is
# refused, so a typo never passes silently.
_NO_WORKER = "a Connect worker setting; Mirrorplane runs no Connect worker"
_NO_INTERNAL = "sizes an MM2 internal topic; Mirrorplane creates its internal topics with the target's defaults"
IGNORED_PROPERTIES: dict[str, tuple[str, str]] = {
    "checkpoints.topic.replication.factor": (_NO_INTERNAL, "int"),
    "heartbeats.topic.replication.factor": (_NO_INTERNAL, "int"),
    "offset-syncs.topic.replication.factor": (_NO_INTERNAL, "int"),
    "offset.storage.replication.factor": (f"{_NO_WORKER} (its offsets topic)", "int"),
    "status.storage.replication.factor": (f"{_NO_WORKER} (its status topic)", "int"),
    "config.storage.replication.factor": (f"{_NO_WORKER} (its config topic)", "int"),
    "offset.storage.topic": (f"{_NO_WORKER} (its offsets topic)", "str"),
    "status.storage.topic": (f"{_NO_WORKER} (its status topic)", "str"),
    "config.storage.topic": (f"{_NO_WORKER} (its config topic)", "str"),
    "key.converter": (f"{_NO_WORKER}; records are copied as bytes, as MM2's ByteArrayConverter does", "str"),
    "value.converter": (f"{_NO_WORKER}; records are copied as bytes, as MM2's ByteArrayConverter does", "str"),
    "header.converter": (f"{_NO_WORKER}; headers are copied as bytes, as MM2's ByteArrayConverter does", "str"),
    "offset.flush.timeout.ms": (f"{_NO_WORKER}; a task commits its position with the target's acknowledgement", "int"),
    "dedicated.mode.enable.internal.rest": (f"{_NO_WORKER} and no REST server between MM2 nodes", "str"),
    "listeners": (f"{_NO_WORKER} and serves no REST API", "str"),
    "scheduled.rebalance.max.delay.ms": (f"{_NO_WORKER}, so no worker group to rebalance", "int"),
    "offset.lag.max": (
        "MM2 writes an offset sync once the downstream offset drifts this far; Mirrorplane writes one at every break "
        "in the offset mapping and at each commit, so translation is exact and has no lag to bound",
        "int",
    ),
    "max.tasks": ("not an MM2 property (MM2's own integration tests set it; MM2 reads tasks.max)", "str"),
}
# Connect worker settings with a meaning here, set globally or for the worker of one target cluster
# (`<alias>.exactly.once.source.support`): in MM2's dedicated mode that worker runs the flows into that cluster.
EXACTLY_ONCE_SUPPORT = "exactly.once.source.support"
_SUPPORT_VALUES = ("enabled", "preparing", "disabled")
WORKER_PROPERTIES = frozenset({EXACTLY_ONCE_SUPPORT})
# Flow properties that MM2 reads as a Connect worker setting, so `<alias>.name` sets them for the flows into alias.
CLUSTER_FLOW_PROPERTIES = frozenset({"offset.flush.interval.ms"})
log = logging.getLogger(__name__)
_GLOBAL = frozenset({*IGNORED_PROPERTIES, *WORKER_PROPERTIES})
REDACTED = "********"
_SECRET_MARKERS = ("password", "secret", "sasl.jaas.config", "ssl.key")
_CLIENT_PREFIXES = ("producer.", "consumer.")
_INT = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


# --- FlowConfigs from properties ---------------------------------------------------------------------------


@dataclasses.dataclass
class _Scope:
    """The properties set globally, for one cluster or for one flow."""

    props: dict[str, tuple[str, str]] = dataclasses.field(default_factory=dict)  # name -> (key as written, value)
    client: dict[str, str] = dataclasses.field(default_factory=dict)
    producer: dict[str, str] = dataclasses.field(default_factory=dict)
    consumer: dict[str, str] = dataclasses.field(default_factory=dict)
    worker: dict[str, tuple[str, str]] = dataclasses.field(default_factory=dict)  # WORKER_PROPERTIES, as in props
    mentioned: bool = False  # by a property other than `enabled`


def load_flows(
    props: Mapping[str, str],
    errors: list[ConfigError] | None = None,
    named: dict[str, ClusterConfig] | None = None,
    notes: list[tuple[str, str]] | None = None,
) -> list[FlowConfig]:
    """The flows a MirrorMaker 2 properties file defines, in the order the file first mentions them.

    Without ``errors`` the first ConfigError is raised; with it, every error is appended there (one per property,
    per cluster's client settings and per flow) and only the flows without errors are returned. ``named``, when
    given, gets every cluster a flow key of the file names, the refused flows' too, so a caller can check them all.
    Each key accepted without effect here (IGNORED_PROPERTIES, ...) is logged once, and appended to ``notes`` as
    (key as written, why it has no effect) when given.
    """
    aliases = _cluster_aliases(props.get("clusters", ""))
    everywhere, clusters = _Scope(), {alias: _Scope() for alias in aliases}
    flows: dict[tuple[str, str], _Scope] = {}
    found: list[tuple[str, str, int]] = []
    for key, value in props.items():
        with _reporting(errors):
            _read(key, value, aliases, everywhere, clusters, flows, found)
    for key, reason, level in found:
        log.log(level, "%s: no effect in Mirrorplane: %s", key, reason)
    if notes is not None:
        notes += [(key, reason) for key, reason, _ in found]
    for prefix, settings in (("producer.", everywhere.producer), ("consumer.", everywhere.consumer)):
        with _reporting(errors):
            _check_client(prefix, settings)
    for alias, cluster in clusters.items():
        for prefix, settings in (
            ("", cluster.client),
            ("producer.", cluster.producer),
            ("consumer.", cluster.consumer),
        ):
            with _reporting(errors):
                _check_client(f"{alias}.{prefix}", settings)
        with _reporting(errors):
            _check_bootstrap(alias, cluster.client)
    built: list[FlowConfig] = []
    for (source, target), flow in flows.items():
        if named is not None:
            named.update({alias: ClusterConfig(alias, dict(clusters[alias].client)) for alias in (source, target)})
        with _reporting(errors):
            config = _build_flow(source, target, flow, everywhere, clusters, errors)
            built += [config] if config is not None else []
    return built


@contextlib.contextmanager
def _reporting(errors: list[ConfigError] | None) -> Iterator[None]:
    """Raise a ConfigError as usual, or, when the caller collects them, record it and carry on."""
    try:
        yield
    except ConfigError as exc:
        if errors is None:
            raise
        errors.append(exc)


def _read(
    key: str,
    value: str,
    aliases: dict[str, None],
    everywhere: _Scope,
    clusters: dict[str, _Scope],
    flows: dict[tuple[str, str], _Scope],
    notes: list[tuple[str, str, int]],
) -> None:
    if key == "clusters":
        return
    if "->" in key:
        source, target, name = _split_flow_key(key, aliases)
        _add(flows.setdefault((source, target), _Scope()), key, name, value, "flow", notes)
    elif key in _GLOBAL or LEGACY_NAMES.get(key, key) in _NAMED:
        _add(everywhere, key, key, value, "global", notes)
    elif alias := _alias_prefix(key, aliases):
        _add(clusters[alias], key, key[len(alias) + 1 :], value, "cluster", notes)
    elif key.startswith(_CLIENT_PREFIXES):  # MM2: the consumer of every flow's source, the producer to every target
        _add(everywhere, key, key, value, "global", notes)
    else:
        raise ConfigError(key, "unknown property")


def _cluster_aliases(value: str) -> dict[str, None]:
    """The aliases in file order, as a dict so that membership is a lookup even with thousands of clusters."""
    aliases = [alias.strip() for alias in value.split(",") if alias.strip()]
    if not aliases:
        raise ConfigError("clusters", "required: the comma-separated aliases of the clusters")
    if len(set(aliases)) != len(aliases):
        raise ConfigError("clusters", f"an alias is listed twice in {value!r}")
    return dict.fromkeys(aliases)


def _split_flow_key(key: str, aliases: dict[str, None]) -> tuple[str, str, str]:
    source, _, rest = key.partition("->")
    target = _alias_prefix(rest, aliases)
    if source not in aliases or target is None:
        listed = ", ".join(list(aliases)[:10]) + (", ..." if len(aliases) > 10 else "")
        raise ConfigError(key, f"not source->target.property with both aliases in clusters ({listed})")
    return source, target, rest[len(target) + 1 :]


def _alias_prefix(key: str, aliases: dict[str, None]) -> str | None:
    # Longest first: with a separator other than '.', aliases may contain dots and prefix one another.
    ends = [end for end, char in enumerate(key) if char == "."]
    return next((key[:end] for end in reversed(ends) if key[:end] in aliases), None)


def _add(scope: _Scope, key: str, name: str, value: str, kind: str, notes: list[tuple[str, str, int]]) -> None:
    canonical = LEGACY_NAMES.get(name, name)
    if name in IGNORED_PROPERTIES:
        reason, value_kind = IGNORED_PROPERTIES[name]
        if value_kind == "int" and not _INT.fullmatch(value):
            raise ConfigError(key, f"expected an integer, got {value!r}")
        notes.append((key, reason, logging.INFO))
    elif name in WORKER_PROPERTIES:
        _add_worker(scope, key, name, value, kind, notes)
    elif kind == "cluster" and name in CLUSTER_FLOW_PROPERTIES:
        scope.props[name] = (key, value)  # for the flows into this cluster
    elif name.startswith(_CLIENT_PREFIXES):
        overrides = scope.producer if name.startswith("producer.") else scope.consumer
        overrides[name.split(".", 1)[1]] = value
    elif kind == "cluster":
        scope.client[name] = value  # checked by librdkafka once the whole file is read
    elif canonical == "enabled" and kind == "global":
        raise ConfigError(key, "a flow is enabled on its own, as source->target.enabled")
    elif canonical in _NAMED:
        scope.props[canonical] = (key, value)
    else:
        raise ConfigError(key, "unknown property")
    scope.mentioned = scope.mentioned or canonical != "enabled"


def _add_worker(scope: _Scope, key: str, name: str, value: str, kind: str, notes: list[tuple[str, str, int]]) -> None:
    """A Connect worker setting, global or for the worker of one target cluster, never for one flow."""
    if kind == "flow":
        raise ConfigError(
            key, f"a Connect worker setting: set it globally or for the target cluster, as <alias>.{name}"
        )
    support = value.lower()  # Connect reads it case-insensitively
    if support not in _SUPPORT_VALUES:
        raise ConfigError(key, f"expected one of {', '.join(_SUPPORT_VALUES)}, got {value!r}")
    if support == "preparing":
        reason = (
            "Connect's step of a rolling upgrade to exactly-once (workers fence out zombie producers, tasks do not yet "
            "write transactions); Mirrorplane has no workers to upgrade one by one, so these flows run at least once "
            "until it is enabled"
        )
        notes.append((key, reason, logging.INFO))
    scope.worker[name] = (key, support)


def _exactly_once(fields: dict[str, Any], merged: Mapping[str, tuple[str, str]], support: tuple[str, str]) -> None:
    """Map exactly.once.source.support onto the flow's exactly_once; a flow's own `exactly.once` wins, unless the
    two say opposite things (enabled against false, disabled against true)."""
    support_key, value = support
    if "exactly.once" not in merged:
        fields["exactly_once"] = value == "enabled"
    elif "exactly_once" in fields and value != "preparing" and fields["exactly_once"] != (value == "enabled"):
        own_key, own = merged["exactly.once"]
        raise ConfigError(own_key, f"{own_key} = {own} contradicts {support_key} = {value}: remove one of them")


def _build_flow(
    source: str,
    target: str,
    flow: _Scope,
    everywhere: _Scope,
    clusters: dict[str, _Scope],
    errors: list[ConfigError] | None = None,
) -> FlowConfig | None:
    """The flow's FlowConfig. Collecting ``errors``, each wrong property of the flow is one error there (and the
    flow is None), not only the first: a file is fixed in one pass."""
    enabled = "enabled" in flow.props and _convert("enabled", *flow.props["enabled"])
    if not enabled and not flow.mentioned:
        return None
    found: list[ConfigError] = []
    with _reporting(found if errors is not None else None):
        _check_client(f"{source}->{target}.producer.", flow.producer)
    with _reporting(found if errors is not None else None):
        _check_client(f"{source}->{target}.consumer.", flow.consumer)
    # The flow's own setting wins over its target worker's (`<target>.offset.flush.interval.ms`), which wins over
    # the global one.
    merged = {**everywhere.props, **clusters[target].props, **flow.props}
    fields: dict[str, Any] = {}
    for name, (key, raw) in merged.items():
        with _reporting(found if errors is not None else None):
            fields[_NAMED[name].field] = _convert(name, key, raw)
    support = clusters[target].worker.get(EXACTLY_ONCE_SUPPORT) or everywhere.worker.get(EXACTLY_ONCE_SUPPORT)
    if support is not None:
        with _reporting(found if errors is not None else None):
            _exactly_once(fields, merged, support)
    if errors is not None:  # FlowConfig would name only the first property that is wrong
        for field, value in fields.items():
            with _reporting(found):
                check_value(PROPERTIES[field], value)
    if errors is not None and found:
        errors += [_as_written(exc, merged) for exc in found]
        return None
    try:
        return FlowConfig(
            **{**fields, "enabled": enabled},
            source=ClusterConfig(source, dict(clusters[source].client)),
            target=ClusterConfig(target, dict(clusters[target].client)),
            producer_overrides={**everywhere.producer, **clusters[target].producer, **flow.producer},
            consumer_overrides={**everywhere.consumer, **clusters[source].consumer, **flow.consumer},
        )
    except ConfigError as exc:
        raise _as_written(exc, merged) from None


def _as_written(exc: ConfigError, merged: Mapping[str, tuple[str, str]]) -> ConfigError:
    """FlowConfig names a property canonically (`topics`); name it as the file wrote it (`a->b.topics`), or two
    flows of one file could not be told apart."""
    if exc.property_name not in merged:
        return exc
    return ConfigError(merged[exc.property_name][0], exc.reason)


def _convert(name: str, key: str, raw: str) -> Any:
    kind = _NAMED[name].kind
    if kind == "bool":
        if raw.lower() not in ("true", "false"):
            raise ConfigError(key, f"expected true or false, got {raw!r}")
        return raw.lower() == "true"
    if kind == "int":
        if not _INT.fullmatch(raw):
            raise ConfigError(key, f"expected an integer, got {raw!r}")
        return int(raw)
    if kind == "float":
        if not _FLOAT.fullmatch(raw):
            raise ConfigError(key, f"expected a number, got {raw!r}")
        return float(raw)
    if kind == "list":
        return tuple(item.strip() for item in raw.split(",") if item.strip())
    return raw


def _check_client(prefix: str, settings: Mapping[str, str]) -> None:
    """Let librdkafka judge names and values, and name the setting it refuses. A key in PEM that an export redacted
    is not parsed: its importer keeps the stored one, or refuses it by name (a redacted password is still a string
    librdkafka takes)."""
    settings = {
        key: value
        for key, value in settings.items()
        if not (value == REDACTED and is_secret(key) and key.endswith(".pem"))
    }
    error = settings_error(settings)
    if error is None:
        return
    key = next((key for key in sorted(settings, key=len, reverse=True) if key in error), None)
    if key is None:  # librdkafka names an alias by its canonical name (linger.ms -> queue.buffering.max.ms)
        key = next((key for key in settings if settings_error({key: settings[key]})), None)
    reason = "unknown property" if "No such configuration property" in error else f"refused by librdkafka: {error}"
    raise ConfigError(prefix + key if key else prefix.rstrip("."), reason)


def _check_bootstrap(alias: str, client: Mapping[str, str]) -> None:
    if "bootstrap.servers" in client:
        try:
            hosts.validate_bootstrap_servers(client["bootstrap.servers"])
        except hosts.HostError as exc:
            raise ConfigError(f"{alias}.bootstrap.servers", str(exc)) from None


# --- properties from FlowConfigs ---------------------------------------------------------------------------


def dump_flows(flows: Sequence[FlowConfig], redact: bool = False) -> str:
    """A properties file that load_flows turns back into equal flows; redact hides passwords, keys and secrets."""
    clusters = _clusters_of(flows)
    lines = ["# Mirrorplane flows in MirrorMaker 2 properties format", _line("clusters", ", ".join(clusters))]
    for alias, cluster in clusters.items():
        lines += [_line(f"{alias}.{key}", value, redact and is_secret(key)) for key, value in cluster.client.items()]
    for flow in flows:
        lines += ["", *_flow_lines(flow, redact)]
    return "\n".join(lines) + "\n"


def _clusters_of(flows: Sequence[FlowConfig]) -> dict[str, ClusterConfig]:
    clusters: dict[str, ClusterConfig] = {}
    names: set[str] = set()
    for flow in flows:
        if flow.name in names:
            raise ConfigError(flow.name, "two flows with the same source and target")
        names.add(flow.name)
        for cluster in (flow.source, flow.target):
            if dict(clusters.setdefault(cluster.alias, cluster).client) != dict(cluster.client):
                raise ConfigError(cluster.alias, "flows disagree on the client settings of this cluster")
    return clusters


def _flow_lines(flow: FlowConfig, redact: bool) -> list[str]:
    prefix = f"{flow.name}."
    lines = []
    for name, prop in _NAMED.items():
        value = getattr(flow, prop.field)
        # A disabled flow is read back only if a property besides `enabled` mentions it.
        if name == "enabled" or value != prop.default or (name == "topics" and not flow.enabled):
            lines.append(_line(prefix + name, _format(prefix + name, value)))
    for kind, overrides in (("producer", flow.producer_overrides), ("consumer", flow.consumer_overrides)):
        lines += [_line(f"{prefix}{kind}.{k}", v, redact and is_secret(k)) for k, v in overrides.items()]
    return lines


def _format(key: str, value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, tuple):
        if any("," in item or item != item.strip() or not item for item in value):
            raise ConfigError(key, f"{value!r} cannot be written as a comma-separated list")
        return ", ".join(value)
    return str(value)


def is_secret(setting: str) -> bool:
    """Whether a client setting holds a credential (a password, a key, a JAAS config): never shown."""
    return any(marker in setting.lower() for marker in _SECRET_MARKERS)


def _line(key: str, value: str, secret: bool = False) -> str:
    return property_line(key, REDACTED if secret else value)


def load_file(path: str | PathLike[str]) -> list[FlowConfig]:
    with open(path, encoding="utf-8") as file:
        return load_flows(parse_properties(file.read()))
