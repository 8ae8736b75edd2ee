"""Heartbeats make replication_hops and upstream_clusters right on a chain and an active/active pair.

Each test uses its own replication.policy.separator, so remote heartbeat topics that other tests (or earlier
runs) left in the shared clusters are not remote topics under this test's policy: the answers can be exact.
"""

from __future__ import annotations

import time
import uuid

import pytest
from confluent_kafka import TIMESTAMP_LOG_APPEND_TIME
from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

from replication.config import ClusterConfig
from replication.emitters.heartbeats import HeartbeatEmitter
from replication.kafka.provisioning import provision_flow
from replication.mm2.mirrorclient import MirrorClient
from replication.mm2.policy import DefaultReplicationPolicy
from replication.mm2.records import Heartbeat
from tests.support.kafka import create_topic, topic_partitions
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


def _timestamp_type(bootstrap: str, topic: str) -> str:
    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept alive until the future resolves
    (future,) = admin.describe_configs([ConfigResource(ResourceType.TOPIC, topic)]).values()
    return str(future.result(timeout=30)["message.timestamp.type"].value)


def test_every_heartbeats_topic_is_stamped_by_its_broker_so_an_arrival_is_exact(kafka_clusters: dict[str, str]) -> None:
    """The reports take a heartbeat's arrival from its record's timestamp: provisioning makes (or turns) the source's
    heartbeats topic and each remote one LogAppendTime, so a replicated heartbeat carries the moment it reached the
    target, not its emitter's timestamp (with which the arrival could only be when a collector read it)."""
    sep = _separator()
    flow = make_flow(kafka_clusters, "us-west", "us-east", f"none{uuid.uuid4().hex}", replication_policy_separator=sep)
    remote = f"us-west{sep}heartbeats"
    create_topic(kafka_clusters["us-east"], remote, config={"message.timestamp.type": "CreateTime"})  # made before
    provision_flow(flow)
    assert _timestamp_type(kafka_clusters["us-west"], "heartbeats") == "LogAppendTime"
    assert _timestamp_type(kafka_clusters["us-east"], remote) == "LogAppendTime"

    emitted = int(time.time() * 1000) - 60_000  # an emitter's clock a minute behind: the arrival must not copy it
    HeartbeatEmitter(flow, clock=lambda: emitted / 1000).run_once()
    task = new_task(flow)
    try:
        drive([task], lambda: _has_heartbeat(kafka_clusters["us-east"], remote, "us-west", "us-east"), what=remote)
    finally:
        task.close()
    arrivals = [
        r.fingerprint[3]
        for r in read_partition(kafka_clusters["us-east"], remote, 0, "read_committed")
        if Heartbeat.from_bytes(r.fingerprint[0], r.fingerprint[1]).timestamp == emitted
    ]
    assert arrivals and all(kind == TIMESTAMP_LOG_APPEND_TIME for kind, _ in arrivals)
    assert all(abs(stamp - time.time() * 1000) < 30_000 for _, stamp in arrivals)  # the broker's now, not -60 s
