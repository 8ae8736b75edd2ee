"""MirrorMaker 2 properties files in and out of the control plane: ``import_properties`` and ``export_properties``.

Parsing and writing are replication.mm2config's; this module maps its FlowConfigs to Cluster and Flow rows
and runs every row through the API serializers, so an import obeys exactly the rules of a POST. Errors are
reported per property, named as in the file (``us-west->us-east.topics: invalid regular expression ...``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from django.db import transaction
from rest_framework.exceptions import ValidationError

from controlplane.audit.services import record, snapshot
from controlplane.clusters.api.serializers import ClusterSerializer
from controlplane.clusters.models import Cluster
from controlplane.flows.api.serializers import FlowSerializer
from controlplane.flows.models import Flow
from controlplane.flows.services import FLOW_PROPERTY_FIELDS, flow_config
from replication.config import ClusterConfig, ConfigError, FlowConfig
from replication.mm2config import REDACTED, dump_flows, load_flows
from replication.properties import parse_properties

M = TypeVar("M", Cluster, Flow)
# librdkafka client setting -> Cluster field
CLUSTER_FIELD_OF = {
    "bootstrap.servers": "bootstrap_servers",
    "security.protocol": "security_protocol",
    "sasl.mechanism": "sasl_mechanism",
    "sasl.mechanisms": "sasl_mechanism",
    "sasl.username": "sasl_username",
    "sasl.password": "sasl_password",
    "ssl.ca.pem": "ssl_ca_pem",
}
_PROPERTY_OF = {name: name.replace("_", ".") for name in FLOW_PROPERTY_FIELDS}
_PROPERTY_OF.update(offset_syncs_topic_location="offset-syncs.topic.location", producer_overrides="producer")
_PROPERTY_OF["consumer_overrides"] = "consumer"


def _refuse(errors: Iterable[str]) -> ValidationError:
    return ValidationError({"properties": list(errors)})


def export_properties(flows: Iterable[Flow]) -> str:
    """Every flow as an MM2 properties file; passwords are written as ********."""
    # facts.lake only when the flow names its own: the control plane's default lake is this deployment's, not the
    # flow's, and a file that round-trips must not pin it.
    configs = [flow_config(flow).replace(facts_lake=flow.facts_lake if flow.facts_enabled else "") for flow in flows]
    return dump_flows(configs, redact=True)


def import_properties(text: str, actor: Any) -> tuple[list[Cluster], list[Flow]]:
    """Create the clusters and flows the file defines, all or nothing; existing identical clusters are reused.

    Each created row gets its own audit record, as if it had been POSTed by ``actor``.
    """
    try:
        configs = load_flows(parse_properties(text))
    except ConfigError as exc:
        raise _refuse([str(exc)]) from None
    with transaction.atomic():
        clusters = {alias: _cluster(config, actor) for alias, config in _clusters_of(configs).items()}
        flows = [_flow(config, actor) for config in configs]
    return list(clusters.values()), flows


def _clusters_of(configs: list[FlowConfig]) -> dict[str, ClusterConfig]:
    clusters: dict[str, ClusterConfig] = {}
    for config in configs:
        clusters.setdefault(config.source.alias, config.source)
        clusters.setdefault(config.target.alias, config.target)
    return clusters


def _cluster(config: ClusterConfig, actor: Any) -> Cluster:
    unsupported = sorted(key for key in config.client if key not in CLUSTER_FIELD_OF)
    if unsupported:
        supported = ", ".join(sorted(CLUSTER_FIELD_OF))
        raise _refuse(
            f"{config.alias}.{key}: not a cluster setting Mirrorplane stores ({supported})" for key in unsupported
        )
    data: dict[str, Any] = {"alias": config.alias}
    data.update({CLUSTER_FIELD_OF[key]: value for key, value in config.client.items()})
    if "security_protocol" in data:
        data["security_protocol"] = data["security_protocol"].upper()
    existing = Cluster.objects.filter(alias=config.alias).first()
    if existing is not None:
        return _reused(existing, data)
    if data.get("sasl_password") == REDACTED:
        raise _refuse([f"{config.alias}.sasl.password: redacted by an export; give the password"])
    serializer = ClusterSerializer(data=data)
    if not serializer.is_valid():
        raise _refuse(_messages(serializer.errors, lambda field: f"{config.alias}.{_client_key(field)}"))
    return _created(serializer.save(), "cluster", actor)


def _reused(cluster: Cluster, data: dict[str, Any]) -> Cluster:
    """An existing cluster is reused when the file agrees with its settings (a redacted password agrees)."""
    stored: dict[str, Any] = {field: getattr(cluster, field) for field in data if field != "sasl_password"}
    given = {field: value for field, value in data.items() if field != "sasl_password"}
    password = data.get("sasl_password")
    if stored != given or (password not in (None, REDACTED) and password != cluster.sasl_password):
        raise _refuse([f"{cluster.alias}: a cluster with this alias exists with other settings"])
    return cluster


def _flow(config: FlowConfig, actor: Any) -> Flow:
    data: dict[str, Any] = {
        "source": config.source.alias,
        "target": config.target.alias,
        "facts_lake": config.facts_lake,
    }
    for field in FLOW_PROPERTY_FIELDS:
        value = getattr(config, field)
        data[field] = list(value) if isinstance(value, tuple) else dict(value) if field.endswith("overrides") else value
    serializer = FlowSerializer(data=data)
    if not serializer.is_valid():
        raise _refuse(_messages(serializer.errors, lambda field: f"{config.name}.{_PROPERTY_OF.get(field, field)}"))
    return _created(serializer.save(), "flow", actor)


def _created(obj: M, kind: str, actor: Any) -> M:
    record(actor, f"{kind}.create", obj, after=snapshot(obj))
    return obj


def _client_key(field: str) -> str:
    return next((key for key, name in CLUSTER_FIELD_OF.items() if name == field), field)


def _messages(errors: dict[str, Any], name_of: Callable[[str], str]) -> list[str]:
    messages = []
    for field, problems in errors.items():
        name = name_of(field) if field not in ("non_field_errors", "source", "target") else name_of("").rstrip(".")
        messages += [f"{name}: {problem}" for problem in _flatten(problems)]
    return messages


def _flatten(problems: Any) -> list[str]:
    """DRF nests list and dict field errors by index or key; a flat list of their messages."""
    if isinstance(problems, dict):
        return [message for nested in problems.values() for message in _flatten(nested)]
    if isinstance(problems, list):
        return [message for nested in problems for message in _flatten(nested)]
    return [str(problems)]
