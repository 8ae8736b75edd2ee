"""Importing a MirrorMaker 2 properties file: every row validated first, then all of them written at once.

Parsing is replication.config.mm2properties'; this module maps its FlowConfigs to Cluster and Flow rows with the API
serializers' own rules, so an import obeys exactly the rules of a POST or a PATCH. A cluster or flow of the file
that exists is changed to the file's settings (a cluster only in the settings the file gives; its password is
never compared or stored, see ``_Plan._existing``); each row is created, changed or unchanged (``mm2diff``).
It reads the database a fixed number of times however long the file is (existing clusters, existing flows),
checks every cluster and flow in memory, and reports every error at once, each with the line of the property it
names (``line 12: us-west->us-east.topics: invalid regular expression ...``). A dry run stops there and answers
what the import would do, with its digest; an import given that digest applies exactly that or nothing. Only then
does it open a transaction, which holds nothing but bulk writes: on SQLite other writers wait for milliseconds,
not for the validation.
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
from controlplane.audit.services import record, record_created, record_updated, snapshot
from controlplane.clusters.api.serializers import ClusterSerializer
from controlplane.clusters.choices import SASL_PROTOCOLS
from controlplane.clusters.models import Cluster
from controlplane.flows import validation
from controlplane.flows.api.serializers import FlowSerializer
from controlplane.flows.defaults import flow_default
from controlplane.flows.mm2 import CLUSTER_FIELD_OF, Lines, client_key, messages, property_of
from controlplane.flows.mm2diff import CHANGED, CREATED, OUTCOMES, UNCHANGED, Item, changes, counts, digest, shown
from controlplane.flows.models import Flow
from controlplane.flows.takeover import running
from replication.config import PROPERTIES, ClusterConfig, ConfigError, FlowConfig
from replication.config.mm2properties import REDACTED, load_flows
from replication.mm2 import cycles
from replication.mm2.properties import parse_properties, property_lines

NO_FLOWS = "the file defines no flow, so nothing would be imported: enable one with source->target.enabled = true"
FAILED_ACTION = "flow.import_failed"
# A user may fail this many imports in the window; further imports wait until the oldest failure leaves it. Enough
# for fixing a file by hand, and it bounds guessing at whatever an answer might still reveal.
MAX_FAILED_IMPORTS = 10
FAILED_IMPORTS_WINDOW = timedelta(minutes=10)
FAILED_IMPORTS_LIMIT = f"at most {MAX_FAILED_IMPORTS} failed imports in {FAILED_IMPORTS_WINDOW.seconds // 60} minutes"
PASSWORD_KEPT = "the stored password is kept: an import never compares or changes the password of a cluster that exists"
# The fields an import may change in an existing row: all but its identity and creation time.
CLUSTER_FIELDS = [f.name for f in Cluster._meta.concrete_fields if f.name not in ("id", "alias", "created_at")]
FLOW_FIELDS = [*PROPERTIES, "updated_at"]


class PreviewOutdated(Exception):
    """The import would now do something other than the preview it was given showed."""


@dataclass
class ImportResult:
    """What an import did, or, on a dry run, would do; ``clusters`` and ``flows`` are the saved rows."""

    dry_run: bool
    digest: str
    items: list[Item]
    clusters: list[Cluster]
    flows: list[Flow]
    ignored: list[str] = field(default_factory=list)  # keys accepted without effect: `line 7: offset.lag.max: ...`
    takeover_job: Any = None  # the MM2 takeover job an import with `takeover` started

    @property
    def counts(self) -> dict[str, dict[str, int]]:
        return counts(self.items)

    def audited(self) -> dict[str, Any]:
        """The import's audit record: the names of the clusters and flows by outcome, never a value."""
        names: dict[str, dict[str, list[str]]] = {kind: {o: [] for o in OUTCOMES} for kind in ("clusters", "flows")}
        for item in self.items:
            names[f"{item.kind}s"][item.outcome].append(item.name)
        return names


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


def import_properties(
    text: str, actor: Any, *, dry_run: bool = False, expect: str | None = None, takeover: bool = False
) -> ImportResult:
    """Create or change the clusters and flows the file defines, all or nothing; or, on a ``dry_run``, only say
    what would be done. With ``expect`` (a dry run's digest), PreviewOutdated unless the import would do exactly
    what that dry run showed. With ``takeover`` the file's new flows are written paused, for the MM2 takeover job
    to resume (controlplane.flows.takeover), and a stored flow of the file that runs refuses the import.

    Each created or changed row gets its own audit record, as if it had been POSTed or PATCHed by ``actor``.
    ValidationError ``{"properties": [every problem, by line]}`` when anything is wrong, and then nothing is written.
    """
    errors: list[ConfigError] = []  # a malformed line's error is named after it: `line 7`
    props = parse_properties(text, errors)
    lines = Lines(property_lines(text, []))
    named: dict[str, ClusterConfig] = {}
    notes: list[tuple[str, str]] = []
    try:
        configs = load_flows(props, errors, named, notes)
    except ConfigError as exc:  # the `clusters` list itself
        configs, errors = [], [*errors, exc]
    # A refused file: the clusters of its refused flows are checked too, so their errors are named in this answer.
    plan = _Plan.of(configs, named if errors else {})
    # A bootstrap.servers the file's own rules refused is refused again by the cluster's: say it once.
    problems = list(dict.fromkeys([(exc.property_name, exc.reason) for exc in errors] + plan.problems))
    if not problems and not plan.flows:
        problems.append(("clusters", NO_FLOWS))
    if problems:
        raise ValidationError({"properties": lines.located(problems)})
    if takeover and running(plan.flows):
        raise ValidationError({"takeover": running(plan.flows)})
    fingerprint = digest(text, plan.items)
    if expect is not None and expect != fingerprint:
        raise PreviewOutdated("the import would now differ from the preview: preview the file again")
    ignored = lines.located(notes)
    if dry_run:
        return ImportResult(True, fingerprint, plan.items, [], [], ignored)
    for flow in plan.new_flows if takeover else []:
        flow.paused = True  # started by the takeover job once its positions are stored
    try:
        with transaction.atomic():
            plan.write(actor)
    except IntegrityError:  # a concurrent request created one of these clusters or flows since the validation
        raise ValidationError({"properties": ["a cluster or flow of this file was created meanwhile; retry"]}) from None
    return ImportResult(False, fingerprint, plan.items, plan.clusters, plan.flows, ignored)


@dataclass
class _Plan:
    """The rows an import would write and what it does to each, or the problems (property as written, message)
    that stop it."""

    clusters: list[Cluster] = field(default_factory=list)
    new_clusters: list[Cluster] = field(default_factory=list)
    changed_clusters: list[tuple[Cluster, dict[str, Any]]] = field(default_factory=list)  # with its snapshot before
    flows: list[Flow] = field(default_factory=list)
    new_flows: list[Flow] = field(default_factory=list)
    changed_flows: list[tuple[Flow, dict[str, Any]]] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)
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
    def of(cls, configs: list[FlowConfig], also_check: dict[str, ClusterConfig]) -> _Plan:
        """The plan of ``configs``; the clusters of ``also_check`` that no config uses are checked, not planned."""
        plan, probe = cls(), cls()
        defined = {(config.source.alias, config.target.alias) for config in configs}
        wanted = _clusters_of(configs)
        aliases = list(wanted | also_check)
        existing = {cluster.alias: cluster for cluster in Cluster.objects.filter(alias__in=aliases)}
        by_alias = {alias: plan._cluster(config, existing.get(alias)) for alias, config in wanted.items()}
        for alias, config in also_check.items():
            if alias not in wanted:
                probe._cluster(config, existing.get(alias))
        plan.problems += probe.problems
        # A flow of a refused cluster is still checked, against a stand-in, so that its own errors are named too.
        known = {
            alias: cluster or Cluster(alias=alias, bootstrap_servers=wanted[alias].client.get("bootstrap.servers", ""))
            for alias, cluster in by_alias.items()
        }
        stored = Flow.objects.filter(source__alias__in=list(wanted), target__alias__in=list(wanted))
        flows = {(f.source.alias, f.target.alias): f for f in stored.select_related("source", "target")}
        others = Flow.objects.values_list(
            "source__alias", "target__alias", "replication_policy_class", "replication_policy_separator"
        )
        # The file's flows replace their stored edges: a changed replication policy is checked for loops anew.
        edges = [cycles.Edge(*row) for row in others if (row[0], row[1]) not in defined]
        graph = cycles.FlowGraph(edges)
        for flow in configs:
            plan._flow(flow, known, graph, flows.get((flow.source.alias, flow.target.alias)))
        return plan

    def write(self, actor: Any) -> None:
        now = timezone.now()
        Cluster.objects.bulk_create(self.new_clusters)
        for cluster, _ in self.changed_clusters:
            cluster.updated_at = now  # bulk_update does not set auto_now fields
        for flow, _ in self.changed_flows:
            flow.updated_at = now
        Cluster.objects.bulk_update([row for row, _ in self.changed_clusters], CLUSTER_FIELDS)
        Flow.objects.bulk_create(self.new_flows)
        Flow.objects.bulk_update([row for row, _ in self.changed_flows], FLOW_FIELDS)
        record_created(actor, "cluster.create", self.new_clusters)
        record_updated(actor, "cluster.update", self.changed_clusters)
        record_created(actor, "flow.create", self.new_flows)
        record_updated(actor, "flow.update", self.changed_flows)

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
        cluster = self._existing(existing, data) if existing is not None else self._new(config.alias, data)
        self.problems += problems
        if cluster is None or problems:
            return None
        self.clusters.append(cluster)
        return cluster

    def _existing(self, cluster: Cluster, data: dict[str, Any]) -> Cluster | None:
        """An existing cluster takes the settings the file gives, as a PATCH would, but for the password.

        The file's password is never compared with the stored one, nor stored: an answer that depended on it
        would tell whoever may import whether a guessed password is right. The stored password is left alone
        (an admin changes it through the cluster API, which audits the change), so a change that would clear it
        (a new bootstrap.servers, security.protocol, sasl.mechanism or ssl.ca.pem of a SASL cluster) is refused.
        """
        # An exported file's client key reads ********: the stored key is kept, as the password is.
        given = {
            name: value
            for name, value in data.items()
            if name != "sasl_password" and not (name == "ssl_key_pem" and value == REDACTED)
        }
        checker = self._cluster_checker
        checker.instance, checker.partial = cluster, True
        try:
            values = dict(checker.run_validation(given))
        except ValidationError as exc:
            self.problems += messages(_as_dict(exc.detail), lambda name: f"{cluster.alias}.{client_key(name)}")
            return None
        finally:
            checker.instance, checker.partial = None, False
        values.pop("sasl_password", None)  # validate() blanks the SASL settings of a protocol without SASL
        diff = changes({name: getattr(cluster, name) for name in values}, values, client_key)
        route = cluster.route_changes(values)
        if route and cluster.has_sasl_password:
            if values.get("security_protocol", cluster.security_protocol) in SASL_PROTOCOLS:
                why = "a change here clears the stored sasl.password, which an import never sets: change this "
                self.problems.append((f"{cluster.alias}.{client_key(route[0])}", why + "cluster in its form"))
                return None
            diff.append(shown("sasl.password", True, None))
        if route and cluster.has_ssl_key and "ssl_key_pem" not in given:
            diff.append(shown("ssl.key.pem", True, None))
        notes = [PASSWORD_KEPT] if data.get("sasl_password") not in (None, "", REDACTED) else []
        self.items.append(Item("cluster", cluster.alias, CHANGED if diff else UNCHANGED, diff, notes))
        if diff:
            before = snapshot(cluster)
            cluster.apply(values)
            self.changed_clusters.append((cluster, before))
        return cluster

    def _new(self, alias: str, data: dict[str, Any]) -> Cluster | None:
        if data.get("sasl_password") == REDACTED:
            self.problems.append((f"{alias}.sasl.password", "redacted by an export; give the password"))
            return None
        if data.get("ssl_key_pem") == REDACTED:
            self.problems.append((f"{alias}.ssl.key.pem", "redacted by an export; give the key"))
            return None
        try:
            values = dict(self._cluster_checker.run_validation(data))
        except ValidationError as exc:
            self.problems += messages(_as_dict(exc.detail), lambda name: f"{alias}.{client_key(name)}")
            return None
        given = {name: value for name, value in values.items() if name != "alias" and value}
        self.items.append(Item("cluster", alias, CREATED, changes(None, given, client_key)))
        password = values.pop("sasl_password", "")
        cluster = Cluster(**values)
        cluster.sasl_password = password
        self.new_clusters.append(cluster)
        return cluster

    def _flow(
        self, config: FlowConfig, clusters: dict[str, Cluster], graph: cycles.FlowGraph, stored: Flow | None
    ) -> None:
        try:
            values = self._flow_checker(clusters).run_validation(_flow_data(config))
        except ValidationError as exc:
            self.problems += messages(_as_dict(exc.detail), lambda name: f"{config.name}.{property_of(name)}")
            return
        edge = cycles.Edge(
            config.source.alias,
            config.target.alias,
            values["replication_policy_class"],
            values["replication_policy_separator"],
        )
        loop = graph.loop_of(edge)
        if loop is not None:
            self.problems.append((config.name, validation.loop_message(loop)))
            return
        graph.add(edge)
        properties = {name: values[name] for name in PROPERTIES}
        if stored is None:
            flow = Flow(**values)
            given = {name: value for name, value in properties.items() if not _is_default(name, value)}
            self.items.append(Item("flow", config.name, CREATED, changes(None, given, property_of)))
            self.new_flows.append(flow)
        else:
            flow = stored
            diff = changes({name: getattr(stored, name) for name in PROPERTIES}, properties, property_of)
            self.items.append(Item("flow", config.name, CHANGED if diff else UNCHANGED, diff))
            if diff:
                before = snapshot(stored)
                for name, value in properties.items():
                    setattr(stored, name, value)
                self.changed_flows.append((stored, before))
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
        cluster: Cluster = self.context["clusters"][data]
        return cluster

    def to_representation(self, value: Cluster) -> str:
        return value.alias


class _FileFlowSerializer(FlowSerializer):
    """FlowSerializer whose database checks (pair uniqueness, undetected loops) the import does once, in bulk."""

    source = _FileCluster()  # type: ignore[assignment]  # the file's clusters, saved or not, for the database's
    target = _FileCluster()  # type: ignore[assignment]  # the file's clusters, saved or not, for the database's

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        values = validation.merged(None, attrs)
        validation.distinct_clusters(values["source"], values["target"])
        validation.flow_config_rules(values)
        return attrs


def _as_dict(detail: Any) -> dict[str, Any]:
    return dict(detail) if isinstance(detail, dict) else {"non_field_errors": detail}


def _is_default(name: str, value: Any) -> bool:
    default = flow_default(name)
    return bool(value == (list(default) if isinstance(default, tuple) else default))


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
