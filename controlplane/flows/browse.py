"""The cluster browser's lists with the flows that replicate each topic: the Kafka reads are the clusters app's
(``controlplane.clusters.browse``), the flows are matched here, where the flows live.

A topic is replicated by a flow whose source is the cluster and whose topic filter selects it (MM2's
``shouldReplicateTopic``: heartbeats always, cycles never), and written by a flow whose target is the cluster when
it is the remote name the flow gives one of its source topics. Only names are compared: no flow's client settings
(and so no password) are read.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from controlplane.clusters import browse
from controlplane.clusters.browse import PageQuery
from controlplane.clusters.models import Cluster
from controlplane.flows.mirror import cluster_policy
from controlplane.flows.models import Flow
from controlplane.flows.services import flow_properties
from replication.config import ClusterConfig, ConfigError, FlowConfig
from replication.mm2.filters import TopicFilter

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Naming:
    """A flow's topic names: its config without credentials, and its topic filter."""

    flow: Flow
    config: FlowConfig
    filter: TopicFilter

    def replicates(self, topic: str) -> dict[str, Any] | None:
        """The flow as a replicator of source topic ``topic``, with the remote topic it writes; None if not."""
        if not self.filter.should_replicate(topic):
            return None
        remote = self.config.policy().format_remote_topic(self.config.source.alias, topic)
        return {**self._ids(), "role": "source", "remote_topic": remote, "source_topic": topic}

    def writes(self, topic: str) -> dict[str, Any] | None:
        """The flow as the writer of remote topic ``topic`` on its target; None if the flow would not write it."""
        policy = self.config.policy()
        upstream = policy.upstream_topic(topic)
        if upstream is None or policy.format_remote_topic(self.config.source.alias, upstream) != topic:
            return None
        if not self.filter.should_replicate(upstream):
            return None
        return {**self._ids(), "role": "target", "remote_topic": topic, "source_topic": upstream}

    def _ids(self) -> dict[str, Any]:
        return {"id": self.flow.pk, "name": self.flow.name}


def _namings(flows: list[Flow]) -> list[_Naming]:
    found = []
    for flow in flows:
        try:
            config = FlowConfig(source=_named(flow.source), target=_named(flow.target), **flow_properties(vars(flow)))
        except ConfigError as exc:  # a row the API would refuse today: shown without its flow, and said why
            log.warning("flow %s: not matched to topics: %s", flow.name, exc)
            continue
        found.append(_Naming(flow, config, TopicFilter(config)))
    return found


def _named(cluster: Cluster) -> ClusterConfig:
    return ClusterConfig(cluster.alias, {"bootstrap.servers": cluster.bootstrap_servers})


def _flows_of(cluster: Cluster) -> tuple[list[_Naming], list[_Naming]]:
    """The flows from and into the cluster, read before any Kafka call (no query is open during one)."""
    related = Flow.objects.select_related("source", "target").order_by("pk")
    outgoing = _namings(list(related.filter(source=cluster)))
    incoming = _namings(list(related.filter(target=cluster)))
    return outgoing, incoming


def replicating_flows(topic: str, outgoing: list[_Naming], incoming: list[_Naming]) -> list[dict[str, Any]]:
    """The flows that replicate ``topic`` from this cluster, then those that write it here as a remote topic."""
    found = [naming.replicates(topic) for naming in outgoing] + [naming.writes(topic) for naming in incoming]
    return [row for row in found if row is not None]


def topics(cluster: Cluster, query: PageQuery) -> dict[str, Any]:
    outgoing, incoming = _flows_of(cluster)
    page = browse.topics(cluster, query)
    for row in page["results"]:
        row["flows"] = replicating_flows(row["topic"], outgoing, incoming)
    return page


def topic(cluster: Cluster, name: str) -> dict[str, Any]:
    outgoing, incoming = _flows_of(cluster)
    found = browse.topic(cluster, name)
    return {**found, "flows": replicating_flows(name, outgoing, incoming)}


def remote_topics(cluster: Cluster, query: PageQuery) -> dict[str, Any]:
    """Remote topics by the policy of the flows into the cluster (as the MirrorClient reads), each with the flow
    that writes it, and the upstream clusters whose heartbeats arrive: a direct flow's, or a path of several hops
    (the dashboard's ``hops``)."""
    _, incoming = _flows_of(cluster)
    direct = {naming.flow.source.alias: naming.flow.pk for naming in incoming}
    page = browse.remote_topics(cluster, cluster_policy(cluster), query)
    for row in page["results"]:
        row["flows"] = replicating_flows(row["topic"], [], incoming)
    hops = page.pop("upstream_hops")
    page["upstream"] = [{"alias": alias, "hops": count, "flow": direct.get(alias)} for alias, count in hops.items()]
    return page
