"""Field specs of the cluster and flow forms. The pages render them; ``forms.js`` turns the inputs into the JSON
the REST API takes (its serializers do all validation, so the UI and automation share one set of rules).

Labels are the MM2 property names operators know from properties files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from controlplane.clusters.choices import SaslMechanism, SecurityProtocol
from controlplane.flows.choices import OffsetSyncsTopicLocation, OnDataLoss, ReplicationPolicyClass
from controlplane.flows.models import Flow


@dataclass(frozen=True)
class Field:
    """One input: ``kind`` is text, password, textarea, list (one pattern per line), number, bool or choice."""

    name: str
    label: str
    kind: str = "text"
    help: str = ""
    choices: list[tuple[str, str]] = field(default_factory=list)
    initial: Any = None

    @property
    def text(self) -> str:
        """The initial value as the input shows it (a list one item per line)."""
        if self.initial is None:
            return ""
        return "\n".join(self.initial) if self.kind == "list" else str(self.initial)


@dataclass(frozen=True)
class Section:
    title: str
    fields: list[Field]
    advanced: bool = False


def cluster_sections() -> list[Section]:
    return [
        Section(
            "Cluster",
            [
                Field("alias", "Alias", help="Prefix of the remote topics replicated from this cluster, e.g. us-west"),
                Field("bootstrap_servers", "bootstrap.servers", help="host:port[,host:port...]"),
            ],
        ),
        Section(
            "Security",
            [
                Field(
                    "security_protocol",
                    "security.protocol",
                    "choice",
                    choices=SecurityProtocol.choices,
                    initial=SecurityProtocol.PLAINTEXT,
                ),
                Field("sasl_mechanism", "sasl.mechanism", "choice", choices=SaslMechanism.choices, initial=""),
                Field("sasl_username", "sasl.username"),
                Field(
                    "sasl_password",
                    "sasl.password",
                    "password",
                    help="Write-only; leave empty to keep the stored one. Changing bootstrap.servers, "
                    "security.protocol, sasl.mechanism or ssl.ca.pem clears it unless you re-enter it",
                ),
                Field("ssl_ca_pem", "ssl.ca.pem", "textarea", help="CA certificate(s) in PEM, if not the system's"),
            ],
        ),
    ]


def _defaults() -> Flow:
    return Flow()


def flow_sections(cluster_aliases: list[str]) -> list[Section]:
    d = _defaults()
    clusters = [(alias, alias) for alias in cluster_aliases]
    return [
        Section(
            "Flow",
            [
                Field("source", "Source cluster", "choice", choices=clusters),
                Field("target", "Target cluster", "choice", choices=clusters),
                Field(
                    "topics", "topics", "list", "Regular expressions of source topics, one per line", initial=d.topics
                ),
                Field("topics_exclude", "topics.exclude", "list", initial=d.topics_exclude),
                Field(
                    "replication_policy_class",
                    "replication.policy.class",
                    "choice",
                    choices=ReplicationPolicyClass.choices,
                    initial=d.replication_policy_class,
                ),
                Field(
                    "replication_policy_separator",
                    "replication.policy.separator",
                    initial=d.replication_policy_separator,
                ),
            ],
        ),
        Section(
            "Consumer groups and offsets",
            [
                Field(
                    "groups", "groups", "list", "Regular expressions of consumer groups to checkpoint", initial=d.groups
                ),
                Field("groups_exclude", "groups.exclude", "list", initial=d.groups_exclude),
                Field(
                    "emit_checkpoints_enabled", "emit.checkpoints.enabled", "bool", initial=d.emit_checkpoints_enabled
                ),
                Field(
                    "emit_checkpoints_interval_seconds",
                    "emit.checkpoints.interval.seconds",
                    "number",
                    initial=d.emit_checkpoints_interval_seconds,
                ),
                Field("emit_heartbeats_enabled", "emit.heartbeats.enabled", "bool", initial=d.emit_heartbeats_enabled),
                Field(
                    "emit_heartbeats_interval_seconds",
                    "emit.heartbeats.interval.seconds",
                    "number",
                    initial=d.emit_heartbeats_interval_seconds,
                ),
                Field(
                    "sync_group_offsets_enabled",
                    "sync.group.offsets.enabled",
                    "bool",
                    initial=d.sync_group_offsets_enabled,
                ),
                Field(
                    "emit_offset_syncs_enabled",
                    "emit.offset-syncs.enabled",
                    "bool",
                    initial=d.emit_offset_syncs_enabled,
                ),
            ],
        ),
        Section(
            "Tasks and delivery",
            [
                Field("tasks_max", "tasks.max", "number", initial=d.tasks_max),
                Field("exactly_once", "exactly.once", "bool", initial=d.exactly_once),
                Field("on_data_loss", "on.data.loss", "choice", choices=OnDataLoss.choices, initial=d.on_data_loss),
                Field(
                    "replication_factor",
                    "replication.factor",
                    "number",
                    "-1: the target broker's default",
                    initial=d.replication_factor,
                ),
            ],
        ),
        Section("Advanced", _advanced(d), advanced=True),
    ]


def _advanced(d: Flow) -> list[Field]:
    numbers = [
        ("refresh_topics_interval_seconds", "refresh.topics.interval.seconds"),
        ("refresh_groups_interval_seconds", "refresh.groups.interval.seconds"),
        ("sync_topic_configs_interval_seconds", "sync.topic.configs.interval.seconds"),
        ("sync_topic_acls_interval_seconds", "sync.topic.acls.interval.seconds"),
        ("sync_group_offsets_interval_seconds", "sync.group.offsets.interval.seconds"),
        ("offset_flush_interval_ms", "offset.flush.interval.ms"),
        ("transaction_boundary_interval_ms", "transaction.boundary.interval.ms"),
    ]
    bools = [
        ("refresh_topics_enabled", "refresh.topics.enabled"),
        ("sync_topic_configs_enabled", "sync.topic.configs.enabled"),
        ("sync_topic_acls_enabled", "sync.topic.acls.enabled"),
        ("abort_on_send_fail", "abort.on.send.fail"),
    ]
    fields = [Field(name, label, "number", initial=getattr(d, name)) for name, label in numbers]
    fields += [Field(name, label, "bool", initial=getattr(d, name)) for name, label in bools]
    fields += [
        Field(
            "offset_syncs_topic_location",
            "offset-syncs.topic.location",
            "choice",
            choices=OffsetSyncsTopicLocation.choices,
            initial=d.offset_syncs_topic_location,
        ),
        Field("config_properties_exclude", "config.properties.exclude", "list", initial=d.config_properties_exclude),
        Field("record_handler_class", "record.handler.class", help="module:Class of a RecordHandler"),
        Field(
            "facts_enabled",
            "facts (analytics reports)",
            "bool",
            initial=d.facts_enabled,
            help="Record replicated runs in the facts lake the latency and audit reports read",
        ),
        Field("facts_lake", "facts.lake", help="Directory or Hadoop URI; empty: the control plane's lake"),
    ]
    return fields
