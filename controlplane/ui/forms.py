"""Field specs of the cluster and flow forms. The pages render them; ``forms.js`` turns the inputs into the JSON
the REST API takes (its serializers do all validation, so the UI and automation share one set of rules).

Labels are the MM2 property names operators know from properties files; a flow property's input, help and
bounds come from FlowConfig's metadata (config.PROPERTIES).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db import models

from controlplane.clusters.choices import SaslMechanism, SecurityProtocol
from controlplane.flows.models import Flow
from controlplane.flows.services import FACTS_FIELDS
from replication.config import PROPERTIES, Property


@dataclass(frozen=True)
class Field:
    """One input: ``kind`` is text, password, textarea, secret-textarea (a write-only textarea), list (one pattern
    per line), number, bool or choice."""

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
                Field(
                    "ssl_certificate_pem",
                    "ssl.certificate.pem",
                    "textarea",
                    help="The client's certificate in PEM, for brokers that ask for one (mTLS)",
                ),
                Field(
                    "ssl_key_pem",
                    "ssl.key.pem",
                    "secret-textarea",
                    help="Write-only: the certificate's unencrypted private key in PEM; leave empty to keep the "
                    "stored one. Cleared like the password",
                ),
            ],
        ),
    ]


# The sections a flow property is shown in; Advanced shows every other one but the producer and consumer overrides
# (maps, which the API alone sets), so a property added to FlowConfig is on the form without a change here.
_FLOW_LAYOUT = {
    "Flow": ("enabled", "topics", "topics_exclude", "replication_policy_class", "replication_policy_separator"),
    "Consumer groups and offsets": (
        "groups",
        "groups_exclude",
        "emit_checkpoints_enabled",
        "emit_checkpoints_interval_seconds",
        "emit_heartbeats_enabled",
        "emit_heartbeats_interval_seconds",
        "sync_group_offsets_enabled",
        "emit_offset_syncs_enabled",
    ),
    "Tasks and delivery": ("tasks_max", "exactly_once", "on_data_loss", "replication_factor"),
}
_KINDS = {"bool": "bool", "int": "number", "float": "number", "list": "list"}


def flow_sections(cluster_aliases: list[str]) -> list[Section]:
    clusters = [(alias, alias) for alias in cluster_aliases]
    shown = {name for names in _FLOW_LAYOUT.values() for name in names}
    advanced = [name for name, prop in PROPERTIES.items() if name not in shown and prop.kind != "map"]
    advanced.insert(advanced.index("facts_lake"), "facts_enabled")
    layout = [*_FLOW_LAYOUT.items(), ("Advanced", advanced)]
    sections = [Section(title, [_flow_field(name) for name in names], title == "Advanced") for title, names in layout]
    sections[0].fields[:0] = [  # the clusters first
        Field("source", "Source cluster", "choice", choices=clusters),
        Field("target", "Target cluster", "choice", choices=clusters),
    ]
    return sections


def _flow_field(name: str) -> Field:
    """A flow property's input, labelled with its MM2 name; help, bounds and default are FlowConfig's."""
    if name not in PROPERTIES:  # facts_enabled, the control plane's own
        return Field(name, "facts (analytics reports)", "bool", FACTS_FIELDS[name], initial=Flow().facts_enabled)
    prop = PROPERTIES[name]
    model_field = Flow._meta.get_field(name)
    assert isinstance(model_field, models.Field)  # a FlowConfig property is a column of the flow, not a relation
    choices = list(model_field.choices or [])  # with the control plane's labels
    notes = [FACTS_FIELDS.get(name, prop.help), "one per line" if prop.kind == "list" else "", _bounds(prop)]
    kind = "choice" if choices else _KINDS.get(prop.kind, "text")
    return Field(name, prop.name, kind, "; ".join(note for note in notes if note), choices, prop.default)


def _bounds(prop: Property) -> str:
    if prop.minimum is None or prop.maximum is None:
        return ""
    return " to ".join(str(int(n)) if n == int(n) else str(n) for n in (prop.minimum, prop.maximum))
