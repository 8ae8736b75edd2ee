"""Importing a MirrorMaker 2 properties file: every row validated first, then all of them written at once.

Parsing is replication.mm2.config's; this module maps its FlowConfigs to Cluster and Flow rows with the API
serializers' own rules, so an import obeys exactly the rules of a POST. It reads the database a fixed number of
times however long the file is (existing clusters, existing flows), checks every cluster and flow in memory,
and reports every error at once, each with the line of the property it names
(``line 12: us-west->us-east.topics: invalid regular expression ...``). Only then does it open a transaction,
which holds nothing but bulk inserts: on SQLite other writers wait for milliseconds, not for the validation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.validators import UniqueValidator

from controlplane.audit.models import AuditRecord
from controlplane.audit.services import record, record_created
from controlplane.clusters.api.serializers import ClusterSerializer
from controlplane.clusters.models import Cluster
from controlplane.flows import validation
from controlplane.flows.api.serializers import FlowSerializer
from controlplane.flows.mm2 import CLUSTER_FIELD_OF, client_key, messages, property_of
from controlplane.flows.models import Flow
from replication.config import PROPERTIES, ClusterConfig, ConfigError, FlowConfig
from replication.mm2 import cycles
from replication.mm2.config import REDACTED, load_flows
from replication.mm2.properties import parse_properties, property_lines

NO_FLOWS = "the file defines no flow, so nothing would be imported: enable one with source->target.enabled = true"
FAILED_ACTION = "flow.import_failed"
# A user may fail this many imports in the window; further imports wait until the oldest failure leaves it. Enough
# for fixing a file by hand, and it bounds guessing at whatever an answer might still reveal.
MAX_FAILED_IMPORTS = 10
FAILED_IMPORTS_WINDOW = timedelta(minutes=10)
FAILED_IMPORTS_LIMIT = f"at most {MAX_FAILED_IMPORTS} failed imports in {FAILED_IMPORTS_WINDOW.seconds // 60} minutes"


def seconds_until_import_allowed(actor: Any) -> int:
    """0 while ``actor`` has failed fewer than MAX_FAILED_IMPORTS imports in the window, else the seconds until
    the oldest of those failures (their audit records) leaves it."""
    now = timezone.now()
    failures = AuditRecord.objects.filter(actor=actor, action=FAILED_ACTION, at__gt=now - FAILED_IMPORTS_WINDOW)
    times = list(failures.order_by("-at").values_list("at", flat=True)[:MAX_FAILED_IMPORTS])
    if len(times) < MAX_FAILED_IMPORTS:
        return 0
    wait: float = (times[-1] + FAILED_IMPORTS_WINDOW - now).total_seconds()
    return max(1, math.ceil(wait))


def record_failure(actor: Any, detail: Any) -> None:
    """Audit a refused import by how many problems it had: the file and the messages stay out of the record,
    as they may quote a secret of the file."""
    problems = sum(len(value) if isinstance(value, list) else 1 for value in _as_dict(detail).values())
    record(actor, FAILED_ACTION, None, after={"problems": problems})


def import_properties(text: str, actor: Any) -> tuple[list[Cluster], list[Flow]]:
    """Create the clusters and flows the file defines, all or nothing; an existing cluster whose settings other
    than the password are the file's is reused, with its stored password.

    Each created row gets its own audit record, as if it had been POSTed by ``actor``. ValidationError
    ``{"properties": [every problem, by line]}`` when anything is wrong, and then nothing is written.
    """
    try:
        lines = _Lines(property_lines(text))
        props = parse_properties(text)
    except ConfigError as exc:  # a malformed line: its message already says which
        raise ValidationError({"properties": [str(exc)]}) from None
    errors: list[ConfigError] = []
    try:
        configs = load_flows(props, errors)
    except ConfigError as exc:  # the `clusters` list itself
        configs, errors = [], [exc]
    plan = _Plan.of(configs)
    # A bootstrap.servers the file's own rules refused is refused again by the cluster's: say it once.
    problems = list(dict.fromkeys([(exc.property_name, exc.reason) for exc in errors] + plan.problems))
    if not problems and not plan.flows:
        problems.append(("clusters", NO_FLOWS))
    if problems:
        raise ValidationError({"properties": lines.located(problems)})
    try:
        with transaction.atomic():
            plan.write(actor)
    except IntegrityError:  # a concurrent request created one of these clusters or flows since the validation
        raise ValidationError({"properties": ["a cluster or flow of this file was created meanwhile; retry"]}) from None
    return plan.clusters, plan.flows


@dataclass
class _Plan:
    """The rows an import would write, or the problems (property as written, message) that stop it."""

    clusters: list[Cluster] = field(default_factory=list)
    new_clusters: list[Cluster] = field(default_factory=list)
    flows: list[Flow] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)
    # One serializer of each kind validates every row: DRF builds a serializer's fields per instance, which cost
    # more than the validation itself (3 of 4 ms per flow).
    _cluster_checker: _NewClusterSerializer = field(default_factory=lambda: _NewClusterSerializer())
    _flows: _FileFlowSerializer | None = None

    def _flow_checker(self, clusters: dict[str, Cluster]) -> _FileFlowSerializer:
        if self._flows is None:
            self._flows = _FileFlowSerializer(context={"clusters": clusters})
        return self._flows

    @classmethod
    def of(cls, configs: list[FlowConfig]) -> _Plan:
        plan = cls()
        wanted = _clusters_of(configs)
        existing = {cluster.alias: cluster for cluster in Cluster.objects.filter(alias__in=list(wanted))}
        by_alias = {alias: plan._cluster(config, existing.get(alias)) for alias, config in wanted.items()}
        known = {alias: cluster for alias, cluster in by_alias.items() if cluster is not None}
        others = Flow.objects.values_list(
            "source__alias", "target__alias", "replication_policy_class", "replication_policy_separator"
        )
        edges = [cycles.Edge(*row) for row in others]
        graph, pairs = cycles.FlowGraph(edges), {(edge.source, edge.target) for edge in edges}
        for config in configs:
            if config.source.alias in known and config.target.alias in known:
                plan._flow(config, known, graph, pairs)
        return plan

    def write(self, actor: Any) -> None:
        Cluster.objects.bulk_create(self.new_clusters)
        Flow.objects.bulk_create(self.flows)
        record_created(actor, "cluster.create", self.new_clusters)
        record_created(actor, "flow.create", self.flows)

    def _cluster(self, config: ClusterConfig, existing: Cluster | None) -> Cluster | None:
        unsupported = sorted(key for key in config.client if key not in CLUSTER_FIELD_OF)
        supported = ", ".join(sorted(CLUSTER_FIELD_OF))
        problems = [
            (f"{config.alias}.{key}", f"not a cluster setting Mirrorplane stores ({supported})") for key in unsupported
        ]
        data: dict[str, Any] = {"alias": config.alias}
        data.update({CLUSTER_FIELD_OF[key]: value for key, value in config.client.items() if key in CLUSTER_FIELD_OF})
        if "security_protocol" in data:
            data["security_protocol"] = data["security_protocol"].upper()
        cluster = self._reused(existing, data) if existing is not None else self._new(config.alias, data)
        self.problems += problems
        if cluster is None or problems:
            return None
        self.clusters.append(cluster)
        return cluster

    def _reused(self, cluster: Cluster, data: dict[str, Any]) -> Cluster | None:
        """An existing cluster is reused when the file agrees with its settings other than the password.

        The file's password is never compared with the stored one, nor stored: an answer that depended on it
        would tell whoever may import whether a guessed password is right. The stored password is left alone
        (an admin changes it through the cluster API, which audits the change).
        """
        stored = {name: getattr(cluster, name) for name in data if name != "sasl_password"}
        given = {name: value for name, value in data.items() if name != "sasl_password"}
        if stored != given:
            self.problems.append((cluster.alias, "a cluster with this alias exists with other settings"))
            return None
        return cluster

    def _new(self, alias: str, data: dict[str, Any]) -> Cluster | None:
        if data.get("sasl_password") == REDACTED:
            self.problems.append((f"{alias}.sasl.password", "redacted by an export; give the password"))
            return None
        try:
            values = dict(self._cluster_checker.run_validation(data))
        except ValidationError as exc:
            self.problems += messages(_as_dict(exc.detail), lambda name: f"{alias}.{client_key(name)}")
            return None
        password = values.pop("sasl_password", "")
        cluster = Cluster(**values)
        cluster.sasl_password = password
        self.new_clusters.append(cluster)
        return cluster

    def _flow(
        self, config: FlowConfig, clusters: dict[str, Cluster], graph: cycles.FlowGraph, pairs: set[tuple[str, str]]
    ) -> None:
        try:
            flow = Flow(**self._flow_checker(clusters).run_validation(_flow_data(config)))
        except ValidationError as exc:
            self.problems += messages(_as_dict(exc.detail), lambda name: f"{config.name}.{property_of(name)}")
            return
        edge = cycles.Edge(
            config.source.alias, config.target.alias, flow.replication_policy_class, flow.replication_policy_separator
        )
        if (edge.source, edge.target) in pairs:
            self.problems.append((config.name, f"a flow {config.name} already exists"))
            return
        loop = graph.loop_of(edge)
        if loop is not None:
            self.problems.append((config.name, validation.loop_message(loop)))
            return
        graph.add(edge)
        pairs.add((edge.source, edge.target))
        self.flows.append(flow)


class _NewClusterSerializer(ClusterSerializer):
    """ClusterSerializer without its per-row uniqueness query: the import looked every alias up at once, and the
    unique constraint still refuses a cluster created meanwhile (an IntegrityError, reported as a 400)."""

    def get_fields(self) -> dict[str, serializers.Field[Any, Any, Any, Any]]:
        fields = super().get_fields()
        alias = fields["alias"]
        alias.validators = [v for v in alias.validators if not isinstance(v, UniqueValidator)]
        return fields


class _FileCluster(serializers.Field[Cluster, str, str, Any]):
    """A cluster of the file being imported, by alias, possibly not saved yet (from the serializer's context)."""

    def to_internal_value(self, data: Any) -> Cluster:
        return self.context["clusters"][data]  # type: ignore[no-any-return]

    def to_representation(self, value: Cluster) -> str:
        return value.alias


class _FileFlowSerializer(FlowSerializer):
    """FlowSerializer whose database checks (pair uniqueness, undetected loops) the import does once, in bulk."""

    source = _FileCluster()
    target = _FileCluster()

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        values = validation.merged(None, attrs)
        validation.distinct_clusters(values["source"], values["target"])
        validation.flow_config_rules(values)
        return attrs


def _as_dict(detail: Any) -> dict[str, Any]:
    return dict(detail) if isinstance(detail, dict) else {"non_field_errors": detail}


def _clusters_of(configs: list[FlowConfig]) -> dict[str, ClusterConfig]:
    clusters: dict[str, ClusterConfig] = {}
    for config in configs:
        clusters.setdefault(config.source.alias, config.source)
        clusters.setdefault(config.target.alias, config.target)
    return clusters


def _flow_data(config: FlowConfig) -> dict[str, Any]:
    """The API's JSON for the flow: lists for tuples, dicts for mappings."""
    data: dict[str, Any] = {"source": config.source.alias, "target": config.target.alias}
    for name, prop in PROPERTIES.items():
        value = getattr(config, name)
        data[name] = list(value) if prop.kind == "list" else dict(value) if prop.kind == "map" else value
    return data


class _Lines:
    """Which line of the file each problem is about: its property's, else the first line of its flow or cluster."""

    def __init__(self, lines: dict[str, int]) -> None:
        self._of = lines
        self._first: dict[str, int] = {}
        for key, number in lines.items():
            for end in (i for i, char in enumerate(key) if char == "."):
                self._first[key[:end]] = min(number, self._first.get(key[:end], number))

    def located(self, problems: list[tuple[str, str]]) -> list[str]:
        numbered = sorted(
            ((self._line(name), name, reason) for name, reason in problems),
            key=lambda item: (item[0] is None, item[0] or 0),
        )
        return [f"{'' if n is None else f'line {n}: '}{name}: {reason}" for n, name, reason in numbered]

    def _line(self, name: str) -> int | None:
        if name in self._of:
            return self._of[name]
        _, arrow, rest = name.partition("->")
        if arrow:  # a property set for every flow: `topics` rather than `a->b.topics`
            for end in (i for i, char in enumerate(rest) if char == "."):
                if rest[end + 1 :] in self._of:
                    return self._of[rest[end + 1 :]]
        return self._first.get(name)
