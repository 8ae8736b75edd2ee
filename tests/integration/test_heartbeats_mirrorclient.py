"""Acceptance 3: heartbeats make replication_hops and upstream_clusters right on a chain and an active/active pair.

Each test uses its own replication.policy.separator, so remote heartbeat topics that other tests (or earlier
runs) left in the shared clusters are not remote topics under this test's policy: the answers can be exact.
"""

from __future__ import annotations

import uuid

import pytest

from replication.config import ClusterConfig
from replication.emitters.heartbeats import HeartbeatEmitter
from replication.mm2.mirrorclient import MirrorClient
from replication.mm2.policy import DefaultReplicationPolicy
from replication.mm2.records import Heartbeat
from tests.support.kafka import topic_partitions
from tests.support.replication import drive, drive_for, make_flow, new_task
from tests.support.translation import read_partition

pytestmark = pytest.mark.kafka


def _separator() -> str:
    return f"_{uuid.uuid4().hex[:6]}_"


def _client(clusters: dict[str, str], alias: str, separator: str) -> MirrorClient:
    return MirrorClient(
        ClusterConfig(alias, {"bootstrap.servers": clusters[alias]}), DefaultReplicationPolicy(separator)
    )


def _has_heartbeat(bootstrap: str, topic: str, source: str, target: str) -> bool:
    """The topic exists and holds a heartbeat of the flow source->target."""
    if topic_partitions(bootstrap, topic) != 1:
        return False
    beats = [
        Heartbeat.from_bytes(r.fingerprint[0], r.fingerprint[1])
        for r in read_partition(bootstrap, topic, 0, "read_committed")
    ]
    return any((h.source_cluster_alias, h.target_cluster_alias) == (source, target) for h in beats)


def test_a_three_cluster_chain_counts_hops_from_heartbeat_topics(kafka_clusters: dict[str, str]) -> None:
    sep = _separator()
    options = {"replication_policy_separator": sep}
    nothing = f"none{uuid.uuid4().hex}"  # only heartbeats flow: the topic filter always lets them through
    ab = make_flow(kafka_clusters, "us-west", "us-east", nothing, **options)
    bc = make_flow(kafka_clusters, "us-east", "backup", nothing, **options)
    for flow in (ab, bc):
        assert HeartbeatEmitter(flow).run_once()
    chained = f"us-east{sep}us-west{sep}heartbeats"
    tasks = [new_task(ab), new_task(bc)]
    try:
        drive(tasks, lambda: _has_heartbeat(kafka_clusters["backup"], chained, "us-west", "us-east"), what=chained)
    finally:
        for task in tasks:
            task.close()
    c, b, a = (_client(kafka_clusters, alias, sep) for alias in ("backup", "us-east", "us-west"))
    assert c.heartbeat_topics() >= {f"us-east{sep}heartbeats", chained}
    assert c.upstream_clusters() == {"us-east", "us-west"}
    assert (c.replication_hops("us-east"), c.replication_hops("us-west")) == (1, 2)
    assert b.upstream_clusters() == {"us-west"}
    assert (b.replication_hops("us-west"), b.replication_hops("backup")) == (1, -1)
    assert a.upstream_clusters() == set()
    assert c.remote_topics("us-east") >= {f"us-east{sep}heartbeats", chained}


def test_an_active_active_pair_sees_each_other_one_hop_away_and_no_cycle(kafka_clusters: dict[str, str]) -> None:
    sep = _separator()
    options = {"replication_policy_separator": sep}
    nothing = f"none{uuid.uuid4().hex}"
    there = make_flow(kafka_clusters, "us-west", "backup", nothing, **options)
    back = make_flow(kafka_clusters, "backup", "us-west", nothing, **options)
    for flow in (there, back):
        assert HeartbeatEmitter(flow).run_once()
    tasks = [new_task(there), new_task(back)]
    try:
        drive(
            tasks,
            lambda: (
                topic_partitions(kafka_clusters["backup"], f"us-west{sep}heartbeats") == 1
                and topic_partitions(kafka_clusters["us-west"], f"backup{sep}heartbeats") == 1
            ),
            what="heartbeats both ways",
        )
        drive_for(tasks, 20)  # more refreshes: each remote heartbeat topic is now a candidate for the other flow
    finally:
        for task in tasks:
            task.close()
    west, backup = _client(kafka_clusters, "us-west", sep), _client(kafka_clusters, "backup", sep)
    assert west.upstream_clusters() == {"backup"} and backup.upstream_clusters() == {"us-west"}
    assert (west.replication_hops("backup"), backup.replication_hops("us-west")) == (1, 1)
    assert west.replication_hops("us-west") == -1
    assert west.heartbeat_topics() == {"heartbeats", f"backup{sep}heartbeats"}  # no backup.us-west.heartbeats
    assert backup.heartbeat_topics() == {"heartbeats", f"us-west{sep}heartbeats"}
