"""Flow rules beyond single fields, raising DRF ValidationErrors keyed by the offending field.

The rules themselves are replication/'s: FlowConfig's validation and the policies' ``is_cycle``.
"""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import ValidationError

from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from controlplane.flows.services import FLOW_PROPERTY_FIELDS, flow_properties
from replication.config import PROPERTIES, ClusterConfig, ConfigError, FlowConfig, compile_patterns
from replication.mm2 import cycles as topology

# ConfigError's property name -> the field it is about: the clusters', and every flow property's.
_FIELD_OF_PROPERTY = {"source.cluster.alias": "source", "target.cluster.alias": "target"}
_FIELD_OF_PROPERTY.update({PROPERTIES[name].name: name for name in FLOW_PROPERTY_FIELDS})


def patterns(name: str, value: list[str]) -> list[str]:
    """Valid regexes that an MM2 properties file can hold: its lists are comma-separated."""
    for pattern in value:
        if "," in pattern:
            raise ValidationError(
                f"{pattern!r}: MM2 lists are comma-separated, so a pattern cannot contain ','"
                " (match a literal comma with \\x2c; write a {m,n} repetition out)"
            )
    try:
        compile_patterns(name, tuple(value))
    except ConfigError as exc:
        raise ValidationError(exc.reason) from None
    return value


def merged(instance: Flow | None, attrs: dict[str, Any]) -> dict[str, Any]:
    """The flow's values after this request: the instance's (or the model defaults), then the request's."""
    base = instance if instance is not None else Flow()
    values = {name: getattr(base, name) for name in FLOW_PROPERTY_FIELDS}
    if instance is not None:
        values.update(source=instance.source, target=instance.target)
    values.update(attrs)
    return values


def distinct_clusters(source: Cluster, target: Cluster) -> None:
    # By alias, not pk: an import validates clusters it has not saved yet.
    if source.alias == target.alias:
        raise ValidationError({"target": ["source and target must be different clusters"]})


def first_flow_of_pair(source: Cluster, target: Cluster, instance: Flow | None) -> None:
    others = Flow.objects.filter(source=source, target=target)
    if instance is not None:
        others = others.exclude(pk=instance.pk)
    if others.exists():
        raise ValidationError({"target": [f"a flow {source.alias}->{target.alias} already exists"]})


def flow_config_rules(values: dict[str, Any]) -> None:
    """Everything FlowConfig checks (aliases against the separator, policy, intervals, ...)."""
    try:
        FlowConfig(
            source=_cluster_config(values["source"]),
            target=_cluster_config(values["target"]),
            **flow_properties(values),
        )
    except ConfigError as exc:
        raise config_error(exc) from None


def config_error(exc: ConfigError) -> ValidationError:
    """The ValidationError keyed by the field the ConfigError names; non_field_errors, naming it, if none."""
    field = _FIELD_OF_PROPERTY.get(exc.property_name)
    return ValidationError({field: [exc.reason]} if field else {"non_field_errors": [str(exc)]})


def no_undetected_loop(values: dict[str, Any], instance: Flow | None) -> None:
    new = _edge(values["source"].alias, values["target"].alias, values)
    others = Flow.objects.select_related("source", "target")
    if instance is not None:
        others = others.exclude(pk=instance.pk)
    edges = [_edge(flow.source.alias, flow.target.alias, vars(flow)) for flow in others]
    loop = topology.undetected_loop(edges, new)
    if loop is not None:
        raise ValidationError({"target": [loop_message(loop)]})


def loop_message(loop: list[str]) -> str:
    return (
        f"this flow would close the loop {topology.describe(loop)}, which its replication policies "
        "cannot detect (IdentityReplicationPolicy keeps topic names, and differing separators hide "
        "the source prefix), so records would be replicated around it forever"
    )


def _edge(source: str, target: str, values: dict[str, Any]) -> topology.Edge:
    return topology.Edge(
        source, target, str(values["replication_policy_class"]), str(values["replication_policy_separator"])
    )


def _cluster_config(cluster: Cluster) -> ClusterConfig:
    # The password is not needed to check the rules, so it is not decrypted here.
    return ClusterConfig(cluster.alias, {"bootstrap.servers": cluster.bootstrap_servers})
