"""MirrorMaker 2 properties files out of the control plane (``export_properties``), and the names an import
(``mm2import``) gives its errors: the property as the file writes it (``us-west->us-east.topics``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from controlplane.flows.models import Flow
from controlplane.flows.services import flow_config
from replication.config import PROPERTIES
from replication.config.mm2properties import dump_flows

# librdkafka client setting -> Cluster field
CLUSTER_FIELD_OF = {
    "bootstrap.servers": "bootstrap_servers",
    "security.protocol": "security_protocol",
    "sasl.mechanism": "sasl_mechanism",
    "sasl.mechanisms": "sasl_mechanism",
    "sasl.username": "sasl_username",
    "sasl.password": "sasl_password",
    "ssl.ca.pem": "ssl_ca_pem",
    "ssl.certificate.pem": "ssl_certificate_pem",
    "ssl.key.pem": "ssl_key_pem",
}


def property_of(field: str) -> str:
    """The MM2 property name of a Flow field (`tasks_max` -> `tasks.max`)."""
    return PROPERTIES[field].name if field in PROPERTIES else field


def export_properties(flows: Iterable[Flow]) -> str:
    """Every flow as an MM2 properties file; passwords are written as ********."""
    # facts.lake only when the flow names its own: the control plane's default lake is this deployment's, not the
    # flow's, and a file that round-trips must not pin it.
    configs = [flow_config(flow).replace(facts_lake=flow.facts_lake if flow.facts_enabled else "") for flow in flows]
    return dump_flows(configs, redact=True)


def client_key(field: str) -> str:
    return next((key for key, name in CLUSTER_FIELD_OF.items() if name == field), field)


def messages(errors: dict[str, Any], name_of: Callable[[str], str]) -> list[tuple[str, str]]:
    """A serializer's errors as (property as the file names it, message) pairs."""
    found = []
    for field, problems in errors.items():
        name = name_of(field) if field not in ("non_field_errors", "source", "target") else name_of("").rstrip(".")
        found += [(name, problem) for problem in _flatten(problems)]
    return found


def _flatten(problems: Any) -> list[str]:
    """DRF nests list and dict field errors by index or key; a flat list of their messages."""
    if isinstance(problems, dict):
        return [message for nested in problems.values() for message in _flatten(nested)]
    if isinstance(problems, list):
        return [message for nested in problems for message in _flatten(nested)]
    return [str(problems)]


class Lines:
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
        return [
            f"{name}: {reason}" if n is None or name == f"line {n}" else f"line {n}: {name}: {reason}"
            for n, name, reason in numbered
        ]

    def _line(self, name: str) -> int | None:
        if name.startswith("line ") and name[5:].isdigit():  # a malformed line, which has no property name
            return int(name[5:])
        if name in self._of:
            return self._of[name]
        _, arrow, rest = name.partition("->")
        if arrow:  # a property set for every flow: `topics` rather than `a->b.topics`
            for end in (i for i, char in enumerate(rest) if char == "."):
                if rest[end + 1 :] in self._of:
                    return self._of[rest[end + 1 :]]
        return self._first.get(name)
