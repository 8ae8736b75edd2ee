"""Heartbeats go where MM2 writes them, and make replication_hops and upstream_clusters right on a chain and an
active/active pair: the same answers as Kafka's own (Java) MirrorClient on the same clusters.

Each test uses its own replication.policy.separator, so remote heartbeat topics that other tests (or earlier
runs) left in the shared clusters are not remote topics under this test's policy: the answers can be exact.
"""

from __future__ import annotations

import subprocess
import time
import uuid
from pathlib import Path

import pytest
from confluent_kafka import TIMESTAMP_LOG_APPEND_TIME
from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

from localkafka.dist import DEFAULT_KAFKA_VERSION, runtime
from localkafka.manager import default_cache_dir
from replication.config import ClusterConfig
from replication.emitters.heartbeats import HeartbeatEmitter
from replication.kafka.provisioning import provision_flow
from replication.mm2.policy import DefaultReplicationPolicy
from replication.mm2.records import Heartbeat
from replication.offsets.mirrorclient import MirrorClient
from tests.support.kafka import create_topic, topic_partitions
from tests.support.replication import drive, drive_for, make_flow, new_task
from tests.support.translation import read_partition

pytestmark = pytest.mark.kafka

# Kafka's MirrorClient (connect-mirror-client of the pinned release), asked what Mirrorplane's is asked.
JAVA_MIRROR_CLIENT = """
import java.util.*;
import org.apache.kafka.connect.mirror.MirrorClient;

public class Hops {
    public static void main(String[] args) throws Exception {
        Map<String, Object> props = Map.of("bootstrap.servers", args[0], "replication.policy.separator", args[1]);
        try (MirrorClient client = new MirrorClient(props)) {
            System.out.println("upstream " + String.join(" ", new TreeSet<>(client.upstreamClusters())));
            for (int i = 2; i < args.length; i++) {
                System.out.println("hops " + args[i] + " " + client.replicationHops(args[i]));
            }
        }
    }
}
"""


def _separator() -> str:
    return f"_{uuid.uuid4().hex[:6]}_"


def _client(clusters: dict[str, str], alias: str, separator: str) -> MirrorClient:
    return MirrorClient(
        ClusterConfig(alias, {"bootstrap.servers": clusters[alias]}), DefaultReplicationPolicy(separator)
    )


def _java_answers(tmp_path: Path, bootstrap: str, separator: str, aliases: list[str]) -> dict[str, object]:
    """Kafka's MirrorClient on the cluster: its upstreamClusters() (sorted) and replicationHops(alias) of each."""
    source = tmp_path / "Hops.java"
    source.write_text(JAVA_MIRROR_CLIENT)
    kafka = runtime(DEFAULT_KAFKA_VERSION, default_cache_dir())
    command = [kafka.java, "-cp", kafka.classpath, str(source), bootstrap, separator, *aliases]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [line.split() for line in done.stdout.splitlines() if line.strip()]
    upstream = next(words[1:] for words in lines if words[0] == "upstream")
    return {"upstream": upstream, "hops": {words[1]: int(words[2]) for words in lines if words[0] == "hops"}}


def _answers(client: MirrorClient, aliases: list[str]) -> dict[str, object]:
    return {
        "upstream": sorted(client.upstream_clusters()),
        "hops": {alias: client.replication_hops(alias) for alias in aliases},
    }


def _heartbeats_in(bootstrap: str, topic: str) -> set[tuple[str, str]]:
    """The flows (source, target) whose heartbeats the single partition of topic holds; none if it is missing."""
    if topic_partitions(bootstrap, topic) != 1:
        return set()
    beats = [
        Heartbeat.from_bytes(r.fingerprint[0], r.fingerprint[1])
        for r in read_partition(bootstrap, topic, 0, "read_committed")
    ]
    return {(h.source_cluster_alias, h.target_cluster_alias) for h in beats}


def _has_heartbeat(bootstrap: str, topic: str, source: str, target: str) -> bool:
    """The topic exists and holds a heartbeat of the flow source->target."""
    return (source, target) in _heartbeats_in(bootstrap, topic)


def test_a_flows_heartbeats_go_to_its_target_and_the_reverse_pairs_to_its_source(
    kafka_clusters: dict[str, str],
) -> None:
    """Where MM2 writes them: the A->B heartbeat connector into B (its worker's cluster), the B->A one (which MM2
    runs by default for every pair) into A."""
    west, east = f"w{uuid.uuid4().hex[:6]}", f"e{uuid.uuid4().hex[:6]}"  # fresh aliases: exact sets of keys
    clusters = {west: kafka_clusters["us-west"], east: kafka_clusters["us-east"]}
    flow = make_flow(clusters, west, east, f"none{uuid.uuid4().hex}")
    emitter = HeartbeatEmitter(flow)
    try:
        assert emitter.run_once() and emitter.run_once()
    finally:
        emitter.close()
    mine = {west, east}
    into_east = {k for k in _heartbeats_in(clusters[east], "heartbeats") if set(k) <= mine}
    into_west = {k for k in _heartbeats_in(clusters[west], "heartbeats") if set(k) <= mine}
    assert (into_east, into_west) == ({(west, east)}, {(east, west)})


def test_a_three_cluster_chain_counts_hops_from_heartbeat_topics(
    kafka_clusters: dict[str, str], tmp_path: Path
) -> None:
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
        # us-west's heartbeats hold us-west->us-east's reverse heartbeat, copied to backup through us-east
        drive(tasks, lambda: _has_heartbeat(kafka_clusters["backup"], chained, "us-east", "us-west"), what=chained)
        # us-east's hold us-west->us-east's own heartbeat, copied to backup by us-east->backup
        once = f"us-east{sep}heartbeats"
        drive(tasks, lambda: _has_heartbeat(kafka_clusters["backup"], once, "us-west", "us-east"), what=once)
    finally:
        for task in tasks:
            task.close()
    c, b, a = (_client(kafka_clusters, alias, sep) for alias in ("backup", "us-east", "us-west"))
    assert c.heartbeat_topics() >= {"heartbeats", f"us-east{sep}heartbeats", chained}
    assert c.upstream_clusters() == {"us-east", "us-west"}
    assert (c.replication_hops("us-east"), c.replication_hops("us-west")) == (1, 2)
    assert b.upstream_clusters() == {"us-west"}
    assert (b.replication_hops("us-west"), b.replication_hops("backup")) == (1, -1)
    assert a.upstream_clusters() == set()
    assert c.remote_topics("us-east") >= {f"us-east{sep}heartbeats", chained}
    aliases = ["us-west", "us-east", "backup"]
    for client in (c, b, a):
        bootstrap = kafka_clusters[client.cluster.alias]
        assert _java_answers(tmp_path, bootstrap, sep, aliases) == _answers(client, aliases), client.cluster.alias
    assert _answers(c, aliases) == {
        "upstream": ["us-east", "us-west"],
        "hops": {"us-west": 2, "us-east": 1, "backup": -1},
    }


def test_an_active_active_pair_sees_each_other_one_hop_away_and_no_cycle(
    kafka_clusters: dict[str, str], tmp_path: Path
) -> None:
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
    aliases = ["us-west", "backup"]
    for client in (west, backup):
        bootstrap = kafka_clusters[client.cluster.alias]
        assert _java_answers(tmp_path, bootstrap, sep, aliases) == _answers(client, aliases), client.cluster.alias


def _timestamp_type(bootstrap: str, topic: str) -> str:
    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept alive until the future resolves
    (future,) = admin.describe_configs([ConfigResource(ResourceType.TOPIC, topic)]).values()
    return str(future.result(timeout=30)["message.timestamp.type"].value)


def test_every_heartbeats_topic_is_stamped_by_its_broker_so_an_arrival_is_exact(kafka_clusters: dict[str, str]) -> None:
    """The reports take a heartbeat's arrival from its record's timestamp: provisioning makes (or turns) the source's
    and the target's heartbeats topics and each remote one LogAppendTime, so a replicated heartbeat carries the
    moment it reached the target, not its emitter's timestamp (with which the arrival could only be when a
    collector read it)."""
    sep = _separator()
    flow = make_flow(kafka_clusters, "us-west", "us-east", f"none{uuid.uuid4().hex}", replication_policy_separator=sep)
    remote = f"us-west{sep}heartbeats"
    create_topic(kafka_clusters["us-east"], remote, config={"message.timestamp.type": "CreateTime"})  # made before
    provision_flow(flow)
    assert _timestamp_type(kafka_clusters["us-west"], "heartbeats") == "LogAppendTime"
    assert _timestamp_type(kafka_clusters["us-east"], "heartbeats") == "LogAppendTime"
    assert _timestamp_type(kafka_clusters["us-east"], remote) == "LogAppendTime"

    emitted = int(time.time() * 1000) - 60_000  # an emitter's clock a minute behind: the arrival must not copy it
    HeartbeatEmitter(flow, clock=lambda: emitted / 1000).run_once()
    task = new_task(flow)
    try:
        drive([task], lambda: _has_heartbeat(kafka_clusters["us-east"], remote, "us-east", "us-west"), what=remote)
    finally:
        task.close()
    arrivals = [
        r.fingerprint[3]
        for r in read_partition(kafka_clusters["us-east"], remote, 0, "read_committed")
        if Heartbeat.from_bytes(r.fingerprint[0], r.fingerprint[1]).timestamp == emitted
    ]
    assert arrivals and all(kind == TIMESTAMP_LOG_APPEND_TIME for kind, _ in arrivals)
    assert all(abs(stamp - time.time() * 1000) < 30_000 for _, stamp in arrivals)  # the broker's now, not -60 s
