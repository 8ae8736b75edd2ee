"""The flow form's preview: which existing source topics the filters replicate and their remote names, and the
loops the new flow would close (warned about when the policy detects them, refused when it cannot)."""

from __future__ import annotations

from typing import Any

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient
from rest_framework.exceptions import ValidationError

from controlplane.clusters.models import Cluster
from controlplane.clusters.services import client_settings
from controlplane.flows import validation
from controlplane.flows.models import Flow
from replication.clientlog import logged
from replication.config import ClusterConfig, FlowConfig
from replication.mm2.cycles import Edge, FlowGraph, describe
from replication.mm2.filters import TopicFilter, nothing_matched
from replication.mm2.policy import is_cycle, is_heartbeats_topic, is_internal_topic

LIST_TIMEOUT = 5.0
MAX_TOPICS = 500
MAX_LOOPS = 20


def preview(values: dict[str, Any], instance: Flow | None) -> dict[str, Any]:
    """``values`` are validated form values: source, target (Clusters), topics, topics_exclude, policy fields."""
    config = _config(values)
    result: dict[str, Any] = {"topics": [], "loops": loops(values, instance), "refused": refused_loop(values, instance)}
    try:
        names = source_topics(values["source"])
    except KafkaException as exc:
        result["error"] = f"{values['source'].alias}: topics not listed: {exc.args[0].str()}"
        return result
    decide = TopicFilter(config)
    rows = [_row(config, decide, name) for name in names]
    rows.sort(key=lambda row: (not row["replicated"], row["topic"]))
    result["topics"] = rows[:MAX_TOPICS]
    result["replicated"] = sum(1 for row in rows if row["replicated"])
    result["total"] = len(rows)
    result["warning"] = nothing_matched(config, [row["topic"] for row in rows if row["replicated"]], len(rows))
    return result


def check_config(values: dict[str, Any]) -> None:
    """Raise ``ConfigError`` if the values make no valid flow config (no I/O: the request answers it at once)."""
    _config(values)


def source_topics(source: Cluster) -> list[str]:
    settings: dict[str, Any] = {**client_settings(source), "socket.timeout.ms": int(LIST_TIMEOUT * 1000)}
    metadata = AdminClient(logged(settings)).list_topics(timeout=LIST_TIMEOUT)
    return sorted(name for name, meta in metadata.topics.items() if meta.error is None)


def _row(config: FlowConfig, decide: TopicFilter, topic: str) -> dict[str, Any]:
    replicated = decide.should_replicate(topic)
    remote = config.policy().format_remote_topic(config.source.alias, topic) if replicated else None
    return {"topic": topic, "replicated": replicated, "remote_topic": remote, "reason": _reason(config, topic)}


def _reason(config: FlowConfig, topic: str) -> str:
    """Why the filter decided as it did, in MM2's words (the decision itself is TopicFilter's)."""
    policy = config.policy()
    if is_cycle(policy, topic, config.target.alias):
        return f"came from {config.target.alias}: not sent back (cycle)"
    if is_heartbeats_topic(policy, topic):
        return "heartbeats: always replicated"
    if is_internal_topic(topic):
        return "internal topic"
    one_flow = TopicFilter(config.replace(topics_exclude=()))
    if not one_flow.should_replicate(topic):
        return "not matched by topics"
    if not TopicFilter(config).should_replicate(topic):
        return "matched by topics.exclude"
    return "matched by topics"


def loops(values: dict[str, Any], instance: Flow | None) -> list[str]:
    """Loops the new flow closes with existing flows, as aliases: source -> target -> ... -> source."""
    graph = FlowGraph(Edge(flow.source.alias, flow.target.alias) for flow in _others(instance))
    source, target = values["source"].alias, values["target"].alias
    paths = graph.paths(target, source, limit=MAX_LOOPS)
    return [describe([source, target, *(edge.target for edge in path)]) for path in paths]


def refused_loop(values: dict[str, Any], instance: Flow | None) -> str:
    """The error the flow API will answer if a loop cannot be detected by the policies, else ''."""
    try:
        validation.no_undetected_loop(values, instance)
    except ValidationError as exc:
        detail: Any = exc.detail
        return str(detail["target"][0]) if isinstance(detail, dict) else str(detail)
    return ""


def _others(instance: Flow | None) -> list[Flow]:
    others = Flow.objects.select_related("source", "target")
    return list(others.exclude(pk=instance.pk) if instance is not None else others)


def _config(values: dict[str, Any]) -> FlowConfig:
    return FlowConfig(
        source=ClusterConfig(values["source"].alias, {"bootstrap.servers": values["source"].bootstrap_servers}),
        target=ClusterConfig(values["target"].alias, {"bootstrap.servers": values["target"].bootstrap_servers}),
        topics=tuple(values["topics"]),
        topics_exclude=tuple(values["topics_exclude"]),
        replication_policy_class=str(values["replication_policy_class"]),
        replication_policy_separator=str(values["replication_policy_separator"]),
    )
