"""The audit records of the cluster browser's offset reads: who read which cluster's topic offsets or consumer group
offsets, and how much came back.

Written after the Kafka read returned, in autocommit (no transaction is open across network I/O), and only for a
read that answered: a 404 or an unreachable cluster returned nothing. A record holds names and figures: never a
config value, a member's host or client id, nor a client setting. Lists (topics, groups, remote topics) are
metadata pages and are not audited; the browser reads offsets, never a record's key or value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from controlplane.audit.services import record
from controlplane.clusters.models import Cluster

TOPIC_OFFSETS_READ = "cluster.read_topic_offsets"
GROUP_OFFSETS_READ = "cluster.read_group_offsets"
Actor = AbstractBaseUser | AnonymousUser


def topic_offsets_read(actor: Actor, cluster: Cluster, found: Mapping[str, Any]) -> None:
    """A topic's partitions and their start and end offsets were read (``browse.topic``'s answer)."""
    partitions = [row["partition"] for row in found["partition_details"]]
    after = {
        "cluster": cluster.alias,
        "topic": found["topic"],
        "partitions": len(partitions),
        "partition_range": [min(partitions), max(partitions)] if partitions else None,
        "end_offset": found["end_offset"],
        "records": found["records"],
    }
    record(actor, TOPIC_OFFSETS_READ, cluster, after=after)


def group_offsets_read(actor: Actor, cluster: Cluster, found: Mapping[str, Any]) -> None:
    """A consumer group's committed offsets, end offsets and lag were read (``browse.group``'s answer)."""
    rows = found["offsets"]
    after = {
        "cluster": cluster.alias,
        "group": found["group"],
        "topics": len({row["topic"] for row in rows}),
        "partitions": len(rows),
        "committed": sum(row["committed_offset"] is not None for row in rows),
    }
    record(actor, GROUP_OFFSETS_READ, cluster, after=after)
