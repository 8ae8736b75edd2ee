"""MirrorClient reads of one cluster: upstream clusters, replication hops and remote topics (MM2's MirrorClient).

The replication policy is the one of the flows into the cluster: remote topic names are read with it.
"""

from __future__ import annotations

from typing import Any

from controlplane.clusters.models import Cluster
from controlplane.clusters.reads import reading
from controlplane.clusters.services import client_settings
from controlplane.flows.choices import ReplicationPolicyClass
from replication.config import ClusterConfig
from replication.mm2.policy import DefaultReplicationPolicy, ReplicationPolicy
from replication.offsets.mirrorclient import MirrorClient

READ_TIMEOUT = 5.0  # an API request's read; the connectivity check before it already found the cluster up


def mirror_client(cluster: Cluster) -> MirrorClient:
    return MirrorClient(
        ClusterConfig(cluster.alias, client_settings(cluster)), cluster_policy(cluster), timeout=READ_TIMEOUT
    )


def upstream_clusters(cluster: Cluster) -> dict[str, Any]:
    found = reading(cluster.alias, lambda: mirror_client(cluster).upstream_clusters(), [cluster])
    return {"cluster": cluster.alias, "upstream_clusters": sorted(found)}


def replication_hops(cluster: Cluster, upstream: str) -> dict[str, Any]:
    hops = reading(cluster.alias, lambda: mirror_client(cluster).replication_hops(upstream), [cluster])
    return {"cluster": cluster.alias, "upstream": upstream, "hops": hops}


def remote_topics(cluster: Cluster, source: str | None = None) -> dict[str, Any]:
    found = reading(cluster.alias, lambda: mirror_client(cluster).remote_topics(source), [cluster])
    return {"cluster": cluster.alias, "source": source, "remote_topics": sorted(found)}


def cluster_policy(cluster: Cluster) -> ReplicationPolicy:
    """The default policy with the separator of the flows into the cluster, as MM2's MirrorClient is configured.

    Identity flows are left out: their remote topics carry no prefix to read, so they add nothing here.
    """
    flows = cluster.incoming_flows.exclude(replication_policy_class=ReplicationPolicyClass.IDENTITY)
    separators = set(flows.values_list("replication_policy_separator", flat=True))
    return DefaultReplicationPolicy(separators.pop() if len(separators) == 1 else ".")
