"""MirrorMaker 2's own integration scenarios (Apache Kafka's connect/mirror/src/test/.../mirror/integration:
MirrorConnectorsIntegrationBaseTest and its Identity, ExactlyOnce and Transactions variants, and the config, ACL
and partition cases of MirrorConnectorsWithCustomForwardingAdminIntegrationTest) on the standalone runner, with the
properties those tests set and the aliases they use, `primary` and `backup`.

MM2 starts two fresh clusters per test. Here the scenarios share the session's clusters and a few runner processes,
one per set of properties that differs (RUNNERS); each runner's topics carry a prefix of its own, and its filters
name only those, as MM2's `test-topic-.*` does. Where MM2 bounds a figure by `offset.lag.max`, these assert the exact
figure, since Mirrorplane translates exactly. docs/mm2-compatibility.md lists each scenario and where it differs.
"""

from __future__ import annotations

import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewPartitions,
    ResourcePatternType,
    ResourceType,
)

from replication.config import ClusterConfig
from replication.mm2.policy import IdentityReplicationPolicy
from replication.mm2.records import Checkpoint, Heartbeat, OffsetSync
from replication.offsets.mirrorclient import MirrorClient
from tests.support.failover import group_member
from tests.support.kafka import admin, consume_to_end, create_topic, end_offsets, topic_partitions, wait_until
from tests.support.replication import start_replicator
from tests.support.translation import committed

# In make test-faults (on 4.x, and on 2.3.0 with MIRRORPLANE_KAFKA_VERSION=2.3.0), not in make test: about 5 min a
# run, and its latest runs are not all green yet (docs/mm2-compatibility.md, "Results").
pytestmark = [pytest.mark.kafka, pytest.mark.compat, pytest.mark.slow]

# MirrorConnectorsIntegrationBaseTest's figures.
NUM_PARTITIONS = 10
NUM_RECORDS_PER_PARTITION = 10
NUM_RECORDS_PRODUCED = NUM_PARTITIONS * NUM_RECORDS_PER_PARTITION
OFFSET_LAG_MAX = 10
RECORD_TRANSFER_S = 30
CHECKPOINT_S = 20
OFFSET_SYNC_S = 30
UID = uuid.uuid4().hex[:6]


def basic_mm2_config() -> dict[str, str]:
    """basicMM2Config() and what startClusters() adds to it, the topic filter aside."""
    return {
        "groups": "consumer-group-.*",
        "sync.topic.acls.enabled": "false",
        "emit.checkpoints.interval.seconds": "1",
        "emit.heartbeats.interval.seconds": "1",
        "refresh.topics.interval.seconds": "1",
        "refresh.groups.interval.seconds": "1",
        "checkpoints.topic.replication.factor": "1",
        "heartbeats.topic.replication.factor": "1",
        "offset-syncs.topic.replication.factor": "1",
        "config.storage.replication.factor": "1",
        "offset.storage.replication.factor": "1",
        "status.storage.replication.factor": "1",
        "replication.factor": "1",
        "primary.offset.flush.interval.ms": "5000",
        "backup.offset.flush.interval.ms": "5000",
        "primary->backup.enabled": "true",
        "backup->primary.enabled": "true",
        "config.properties.exclude": "delete\\\\.retention\\\\..*",  # Java properties: one backslash each
        "sync.topic.configs.interval.seconds": "1",
    }


# MM2's tests that enable group offset sync (testOneWayReplicationWithAutoOffsetSync, testRestartReplication, ...).
GROUP_SYNC = {"sync.group.offsets.enabled": "true", "sync.group.offsets.interval.seconds": "1"}
ONE_WAY = {"backup->primary.enabled": "false"}


@dataclass
class Runner:
    """One `python -m replication run` process over a properties file, with MM2's aliases on two test clusters."""

    key: str
    primary: str  # bootstrap servers
    backup: str
    properties: dict[str, str]
    workdir: Path
    identity: bool = False
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def prefix(self) -> str:
        return f"{self.key}{UID}"

    def topic(self, name: str) -> str:
        """MM2's `test-topic-1` as this runner's `<prefix>-test-topic-1`."""
        return f"{self.prefix}-{name}"

    def remote(self, name: str, source: str = "primary") -> str:
        return self.topic(name) if self.identity else f"{source}.{self.topic(name)}"

    def group(self, name: str) -> str:
        return f"consumer-group-{self.prefix}-{name}"

    @property
    def config(self) -> Path:
        return self.workdir / f"{self.key}.properties"

    @property
    def log(self) -> Path:
        return self.workdir / f"{self.key}.log"

    def start(self) -> None:
        lines = ["clusters = primary, backup", f"primary.bootstrap.servers = {self.primary}"]
        lines += [f"backup.bootstrap.servers = {self.backup}"]
        lines += [f"{key} = {value}" for key, value in self.properties.items()]
        self.config.write_text("\n".join(lines) + "\n")
        self.proc = start_replicator(self.config, self.log)

    def stop(self) -> int:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(timeout=30)

    def assert_running(self) -> None:
        assert self.proc is not None and self.proc.poll() is None, f"runner {self.key} exited:\n{self.tail()}"

    def tail(self) -> str:
        return self.log.read_text()[-4000:] if self.log.exists() else "(no log)"

    def client(self, alias: str) -> MirrorClient:
        bootstrap = self.primary if alias == "primary" else self.backup
        policy = IdentityReplicationPolicy() if self.identity else None
        return MirrorClient(ClusterConfig(alias, {"bootstrap.servers": bootstrap}), policy=policy)


# --- Kafka helpers -----------------------------------------------------------------------------------------------


def produce_messages(
    bootstrap: str, topic: str, partitions: int = NUM_PARTITIONS, per_partition: int = NUM_RECORDS_PER_PARTITION
) -> None:
    """TestUtils.generateRecords: per_partition records in each of the first `partitions` partitions."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for seq in range(per_partition):
        for p in range(partitions):
            producer.produce(topic, f"value-{p}-{seq}".encode(), f"key-{p}-{seq}".encode(), p)
    assert producer.flush(30) == 0


def produce_transaction(producer: Producer, topic: str) -> None:
    """MirrorConnectorsIntegrationTransactionsTest.produceMessages: one transaction of NUM_RECORDS_PRODUCED."""
    producer.begin_transaction()
    for seq in range(NUM_RECORDS_PER_PARTITION):
        for p in range(NUM_PARTITIONS):
            producer.produce(topic, f"tx-{p}-{seq}".encode(), f"key-{p}-{seq}".encode(), p)
    producer.commit_transaction(30)


def count(bootstrap: str, topic: str, partitions: int = NUM_PARTITIONS, isolation: str = "read_committed") -> int:
    return len(consume_to_end(bootstrap, topic, partitions, isolation=isolation, timeout=60))


def read_written(bootstrap: str, topic: str, partitions: int, timeout: float = 60.0) -> list[Any]:
    """The records written before the call (read_uncommitted), up to the end offsets read first. For topics the five
    runners write without pause (heartbeats, offset syncs), where a read "to the end" never sees one."""
    ends = end_offsets(bootstrap, topic, range(partitions))
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "mp-test-written", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, p, 0) for p, end in ends.items() if end > 0])
    records: list[Any] = []
    waiting = {p for p, end in ends.items() if end > 0}
    deadline = time.monotonic() + timeout
    try:
        while waiting:
            assert time.monotonic() < deadline, f"{topic}: partitions {sorted(waiting)} not read to {ends} in time"
            msg = consumer.poll(0.2)
            if msg is None or msg.error() is not None:
                continue
            p = msg.partition() or 0
            if p in waiting and (msg.offset() or 0) < ends[p]:
                records.append(msg)
            if (msg.offset() or 0) + 1 >= ends[p]:
                waiting.discard(p)
    finally:
        consumer.close()
    return records


def per_partition(bootstrap: str, topic: str, partitions: int = NUM_PARTITIONS) -> dict[int, int]:
    got = dict.fromkeys(range(partitions), 0)
    for msg in consume_to_end(bootstrap, topic, partitions, isolation="read_committed", timeout=60):
        got[msg.partition() or 0] += 1
    return got


def wait_for_count(bootstrap: str, topic: str, expected: int, partitions: int = NUM_PARTITIONS) -> None:
    """At least `expected` records arrive (then the caller asserts the exact count, as MM2's consume(n) is)."""

    def arrived() -> bool:
        try:
            return sum(end_offsets(bootstrap, topic, range(partitions), timeout=5).values()) >= expected
        except KafkaException:
            return False

    wait_until(arrived, RECORD_TRANSFER_S, 0.3, f"{expected} records in {topic}")


def wait_for_topic(bootstrap: str, topic: str, runner: Runner, timeout: float = OFFSET_SYNC_S) -> None:
    def created() -> bool:
        runner.assert_running()
        return topic_partitions(bootstrap, topic) > 0

    wait_until(created, timeout, 0.3, f"{topic} created by runner {runner.key}")


def commit_end_offsets(bootstrap: str, group: str, topics: dict[str, int]) -> dict[tuple[str, int], int]:
    """The group commits each partition's end offset (warmUpConsumer, or a consumer that read everything)."""
    offsets = {
        (topic, p): offset
        for topic, n in topics.items()
        for p, offset in end_offsets(bootstrap, topic, range(n)).items()
    }
    commit(bootstrap, group, offsets)
    return offsets


def commit(bootstrap: str, group: str, offsets: dict[tuple[str, int], int]) -> None:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        consumer.commit(offsets=[TopicPartition(t, p, o) for (t, p), o in offsets.items()], asynchronous=False)
    finally:
        consumer.close()


def topic_config(bootstrap: str, topic: str, name: str) -> str | None:
    client = admin(bootstrap)
    resource = ConfigResource(ResourceType.TOPIC, topic)
    entries = client.describe_configs([resource])[resource].result(timeout=30)
    entry = entries.get(name)
    return None if entry is None else entry.value


def alter_topic_config(bootstrap: str, topic: str, op: AlterConfigOpType, **configs: str) -> None:
    client = admin(bootstrap)
    entries = [ConfigEntry(name.replace("_", "."), value, incremental_operation=op) for name, value in configs.items()]
    resource = ConfigResource(ResourceType.TOPIC, topic, incremental_configs=entries)
    client.incremental_alter_configs([resource])[resource].result(timeout=30)


def translated(runner: Runner, group: str, source: str, remote_topic: str) -> dict[int, int]:
    """MirrorClient.remoteConsumerOffsets(group, source) for one remote topic, by partition."""
    target = "backup" if source == "primary" else "primary"
    offsets = runner.client(target).remote_consumer_offsets(group, source, timeout=5)
    return {p: offset for (topic, p), offset in offsets.items() if topic == remote_topic}


def wait_for_checkpoints(
    runner: Runner, group: str, source: str, remote_topic: str, expected: dict[int, int]
) -> dict[int, int]:
    """waitForCheckpointOnAllPartitions, with the exact offsets expected on every partition."""
    last: dict[int, int] = {}

    def arrived() -> bool:
        nonlocal last
        runner.assert_running()
        last = translated(runner, group, source, remote_topic)
        return last == expected

    try:
        wait_until(arrived, CHECKPOINT_S, 0.5, f"checkpoints of {group} for {remote_topic}")
    except AssertionError:
        raise AssertionError(f"{group} {remote_topic}: checkpoints {last}, expected {expected}") from None
    return last


def wait_for_group_sync(bootstrap: str, group: str, expected: dict[tuple[str, int], int], runner: Runner) -> None:
    """waitForConsumerGroupFullSync, exact: the target group's committed offsets are the translated ends."""
    last: dict[tuple[str, int], int] = {}

    def synced() -> bool:
        nonlocal last
        runner.assert_running()
        last = {tp: o for tp, o in committed(bootstrap, group).items() if tp in expected}
        return last == expected

    try:
        wait_until(synced, OFFSET_SYNC_S, 0.5, f"group offsets of {group}")
    except AssertionError:
        raise AssertionError(f"{group}: committed {last}, expected {expected}") from None


def read_as_group(bootstrap: str, group: str, topics: list[str], idle_s: float = 3.0) -> list[tuple[str, int]]:
    """What a member of `group` reads from its committed offsets until nothing comes for idle_s (no commit)."""
    consumer = group_member(bootstrap, group)
    consumer.subscribe(topics)
    got: list[tuple[str, int]] = []
    deadline = time.monotonic() + 30
    quiet_since = time.monotonic()
    try:
        while time.monotonic() - quiet_since < idle_s or not consumer.assignment():
            assert time.monotonic() < deadline, f"{group}: no assignment or no quiet in time"
            for msg in consumer.consume(500, 0.3):
                if msg.error() is None:
                    got.append((msg.topic() or "", msg.partition() or 0))
                    quiet_since = time.monotonic()
    finally:
        consumer.close()
    return got


def checkpoints_of(bootstrap: str, topic: str, group: str) -> list[Checkpoint]:
    records = consume_to_end(bootstrap, topic, 1, timeout=30)
    found = [Checkpoint.from_bytes(m.key(), m.value()) for m in records]
    return [cp for cp in found if cp.consumer_group_id == group]


def assert_monotonic_checkpoints(bootstrap: str, topic: str, group: str) -> None:
    """assertMonotonicCheckpoints, for one group: no checkpoint's downstream offset goes backwards."""
    last: dict[tuple[str, int], int] = {}
    for cp in checkpoints_of(bootstrap, topic, group):
        key = (cp.topic, cp.partition)
        assert cp.downstream_offset >= last.get(key, cp.downstream_offset), f"checkpoint went backwards: {cp}"
        last[key] = cp.downstream_offset


def acl_filter(topic: str) -> AclBindingFilter:
    return AclBindingFilter(
        ResourceType.TOPIC,
        topic,
        ResourcePatternType.ANY,
        None,  # type: ignore[arg-type]  # None matches any principal and host
        None,  # type: ignore[arg-type]
        AclOperation.ANY,
        AclPermissionType.ANY,
    )


def dummy_describe(topic: str) -> AclBinding:
    return AclBinding(
        ResourceType.TOPIC,
        topic,
        ResourcePatternType.LITERAL,
        "User:dummy",
        "*",
        AclOperation.DESCRIBE,
        AclPermissionType.ALLOW,
    )


def acls(bootstrap: str, topic: str) -> list[AclBinding]:
    client = admin(bootstrap)
    return list(client.describe_acls(acl_filter(topic)).result(timeout=30))


# --- the runners ----------------------------------------------------------------------------------------------


def _runners(clusters: dict[str, str], workdir: Path) -> dict[str, Runner]:
    """One runner per set of properties. `a`: the base test, both ways, with the group offset sync, the ACL sync
    and the transactional source of its subclasses (none changes what the others assert). `b`: one way, as
    the base test's one-way scenarios set it. `c`: IdentityReplicationIntegrationTest, with offset.lag.max 0
    (testOneWayReplicationWithFrequentOffsetSyncs) and its offset syncs on the target
    (testOffsetSyncsTopicsOnTarget). `d`: use.defaults.from = source (testReplicateSourceDefault),
    primary.consumer.auto.offset.reset = latest (testReplicateFromLatest) and emit.offset-syncs.enabled = false
    (testReplicationWithoutOffsetSyncWillNotCreateOffsetSyncsTopic), its primary the third cluster so that no
    other runner's offset syncs topic is there. `e`: MirrorConnectorsIntegrationExactlyOnceTest."""
    west, east, third = clusters["us-west"], clusters["us-east"], clusters["backup"]

    def both_ways(key: str) -> str:
        p = f"{key}{UID}"
        return f"{p}-test-topic-.*, primary.{p}-test-topic-.*, backup.{p}-test-topic-.*"

    lag = {"offset.lag.max": str(OFFSET_LAG_MAX)}
    return {
        "a": Runner(
            "a",
            west,
            east,
            {
                **basic_mm2_config(),
                "topics": both_ways("a"),
                **GROUP_SYNC,
                **lag,
                "sync.topic.acls.enabled": "true",
                "sync.topic.acls.interval.seconds": "1",
            },
            workdir,
        ),
        "b": Runner(
            "b", west, east, {**basic_mm2_config(), "topics": both_ways("b"), **ONE_WAY, **GROUP_SYNC, **lag}, workdir
        ),
        "c": Runner(
            "c",
            west,
            east,
            {
                **basic_mm2_config(),
                **ONE_WAY,
                "replication.policy.class": "org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
                "topics": f"c{UID}-test-topic-.*",
                **GROUP_SYNC,
                "offset.lag.max": "0",
                "primary->backup.offset-syncs.topic.location": "target",
            },
            workdir,
            identity=True,
        ),
        "d": Runner(
            "d",
            third,
            east,
            {
                **basic_mm2_config(),
                "topics": both_ways("d"),
                **ONE_WAY,
                "use.defaults.from": "source",
                "primary.consumer.auto.offset.reset": "latest",
                "emit.offset-syncs.enabled": "false",
            },
            workdir,
        ),
        "e": Runner(
            "e",
            west,
            east,
            {
                **basic_mm2_config(),
                "topics": both_ways("e"),
                "primary.exactly.once.source.support": "enabled",
                "backup.exactly.once.source.support": "enabled",
            },
            workdir,
        ),
    }


def _create_topics(runner: Runner) -> None:
    """createTopics(), before the runner starts: test-topic-1 on both (compacted on primary), an empty
    test-topic-no-checkpoints on primary."""
    create_topic(runner.primary, runner.topic("test-topic-no-checkpoints"), 1)
    create_topic(runner.primary, runner.topic("test-topic-1"), NUM_PARTITIONS, {"cleanup.policy": "compact"})
    create_topic(runner.backup, runner.topic("test-topic-1"), NUM_PARTITIONS)


@pytest.fixture(scope="module")
def runners(kafka_clusters: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Runner]]:
    """Every runner, started together after each has the topics, records and groups its scenarios set up before
    MM2 starts; stopped at the end, each with exit code 0."""
    found = _runners(kafka_clusters, tmp_path_factory.mktemp("mm2-scenarios"))
    for runner in found.values():
        _create_topics(runner)
    _before_start(found)
    for runner in found.values():
        runner.start()
    try:
        yield found
    finally:
        for runner in found.values():  # all at once: each takes a few seconds to store its positions
            if runner.proc is not None and runner.proc.poll() is None:
                runner.proc.send_signal(signal.SIGTERM)
        codes = {key: runner.stop() for key, runner in found.items()}
    assert codes == dict.fromkeys(found, 0), "\n".join(f"{k}: {r.tail()}" for k, r in found.items())
    errors = {key: unexpected_errors(runner.log.read_text()) for key, runner in found.items()}
    assert errors == {key: [] for key in found}, errors


def unexpected_errors(log: str) -> list[str]:
    """ERROR lines and tracebacks, but for one the sharing causes: every runner copies a `heartbeats` topic into
    the same remote heartbeats topic (`primary.heartbeats` on backup, ...), so a runner that starts after another
    finds records there it did not write, and says so (a resume mismatch), as a lone MM2 would not."""
    lines = [line for line in log.splitlines() if " ERROR " in line or line.startswith("Traceback")]
    return [line for line in lines if "RESUME MISMATCH heartbeats-0" not in line]


def _before_start(found: dict[str, Runner]) -> None:
    a, b, c, d, e = (found[key] for key in "abcde")
    # testReplication (a, c, e): records on both sides, and the group's warm-up commit on both.
    for runner in (a, c, e):
        produce_messages(runner.primary, runner.topic("test-topic-1"))
        if runner is not c:  # IdentityReplicationIntegrationTest replicates one way and produces on primary only
            produce_messages(runner.backup, runner.topic("test-topic-1"))
        group = runner.group("testReplication")
        commit_end_offsets(runner.primary, group, {runner.topic("test-topic-1"): NUM_PARTITIONS})
        commit_end_offsets(runner.backup, group, {runner.topic("test-topic-1"): NUM_PARTITIONS})
    # testSyncTopicACLsUseProvidedForwardingAdmin: the ACL exists on both before MM2 starts.
    for bootstrap in (a.primary, a.backup):
        client = admin(bootstrap)
        binding = dummy_describe(a.topic("test-topic-1"))
        client.create_acls([binding])[binding].result(timeout=30)
    # testCreatePartitionsUseProvidedForwardingAdmin's topic, apart from test-topic-1.
    create_topic(a.primary, a.topic("test-topic-grow"), NUM_PARTITIONS)
    # testOneWayReplicationWithAutoOffsetSync (b, c): the group read everything before MM2 starts.
    produce_messages(b.primary, b.topic("test-topic-1"))  # c's were produced for testReplication above
    for runner in (b, c):
        commit_end_offsets(runner.primary, runner.group("offsetSync"), {runner.topic("test-topic-1"): NUM_PARTITIONS})
    # testReplicateFromLatest: records that must not be replicated, and the sentinel topic.
    produce_messages(d.primary, d.topic("test-topic-1"))
    create_topic(d.primary, d.topic("test-topic-sentinel"), 1)


# --- a: MirrorConnectorsIntegrationBaseTest, both ways -----------------------------------------------------------


def test_replication_both_ways_with_configs_checkpoints_failover_and_new_topics(runners: dict[str, Runner]) -> None:
    """testReplication (with createAndTestNewTopicWithConfigFilter), replicateBackupToPrimary = true."""
    run = runners["a"]
    _assert_replication(run, both_ways=True)


def _assert_replication(run: Runner, both_ways: bool) -> None:
    topic1, backup_topic1, reverse_topic1 = run.topic("test-topic-1"), run.remote("test-topic-1"), ""
    group = run.group("testReplication")
    wait_for_topic(run.backup, backup_topic1, run)
    if both_ways:
        reverse_topic1 = run.remote("test-topic-1", "backup")
        wait_for_topic(run.primary, reverse_topic1, run)
    wait_until(
        lambda: topic_config(run.backup, backup_topic1, "cleanup.policy") == "compact",
        10,
        0.3,
        "cleanup.policy synced to the remote topic",
    )
    _assert_new_topic_with_config_filter(run)

    wait_for_count(run.backup, backup_topic1, NUM_RECORDS_PRODUCED)
    assert count(run.primary, topic1) == NUM_RECORDS_PRODUCED, "Records were not produced to primary cluster."
    # Under IdentityReplicationPolicy the remote topic is backup's own test-topic-1, which nobody produced to.
    assert count(run.backup, backup_topic1) == NUM_RECORDS_PRODUCED, "Records were not replicated to backup cluster."
    assert count(run.backup, topic1) == NUM_RECORDS_PRODUCED, "Records were not produced to backup cluster."
    if both_ways:
        wait_for_count(run.primary, reverse_topic1, NUM_RECORDS_PRODUCED)
        assert count(run.primary, reverse_topic1) == NUM_RECORDS_PRODUCED, "Records were not replicated to primary."

    backup_client = run.client("backup")
    assert "primary" in backup_client.upstream_clusters(), "Did not find upstream primary cluster."
    assert backup_client.replication_hops("primary") == 1, "Did not calculate replication hops correctly."
    # warmUpConsumer committed the end of every partition: the checkpoints translate it to the remote topic's end
    # (past the commit marker of the last transaction, exactly once).
    ends = end_offsets(run.backup, backup_topic1, range(NUM_PARTITIONS))
    assert set(ends.values()) <= {NUM_RECORDS_PER_PARTITION, NUM_RECORDS_PER_PARTITION + 1}, ends
    backup_offsets = wait_for_checkpoints(run, group, "primary", backup_topic1, ends)
    assert 0 < backup_offsets[0] <= NUM_RECORDS_PRODUCED, "Consumer failed over to a wrong offset."
    assert_monotonic_checkpoints(run.backup, "primary.checkpoints.internal", group)
    if both_ways:
        primary_client = run.client("primary")
        assert "backup" in primary_client.upstream_clusters(), "Did not find upstream backup cluster."
        assert primary_client.replication_hops("backup") == 1, "Did not calculate replication hops correctly."
        reverse_ends = end_offsets(run.primary, reverse_topic1, range(NUM_PARTITIONS))
        wait_for_checkpoints(run, group, "backup", reverse_topic1, reverse_ends)  # failback

    # More matching topics: found by the refresh, created on the other side, records in partition 0 only.
    topic2, backup_topic2 = run.topic("test-topic-2"), run.remote("test-topic-2")
    create_topic(run.primary, topic2, NUM_PARTITIONS)
    wait_for_topic(run.backup, backup_topic2, run)
    produce_messages(run.primary, topic2, partitions=1)
    wait_for_count(run.backup, backup_topic2, NUM_RECORDS_PER_PARTITION)
    assert count(run.backup, backup_topic2) == NUM_RECORDS_PER_PARTITION, "New topic was not replicated to backup."
    if both_ways:
        topic3, reverse_topic3 = run.topic("test-topic-3"), run.remote("test-topic-3", "backup")
        create_topic(run.backup, topic3, NUM_PARTITIONS)
        wait_for_topic(run.primary, reverse_topic3, run)
        produce_messages(run.backup, topic3, partitions=1)
        wait_for_count(run.primary, reverse_topic3, NUM_RECORDS_PER_PARTITION)
        assert count(run.primary, reverse_topic3) == NUM_RECORDS_PER_PARTITION, "New topic not replicated to primary."
        # No cycle: backup's remote topic of primary's test-topic-1 never comes back to primary.
        assert topic_partitions(run.primary, f"backup.{backup_topic1}") == 0


def _assert_new_topic_with_config_filter(run: Runner) -> None:
    """createAndTestNewTopicWithConfigFilter: an excluded config is not copied, another one is."""
    topic, backup_topic = run.topic("test-topic-with-config"), run.remote("test-topic-with-config")
    create_topic(run.primary, topic, NUM_PARTITIONS, {"delete.retention.ms": "1000", "retention.bytes": "1000"})
    wait_for_topic(run.backup, backup_topic, run)
    assert topic_config(run.backup, backup_topic, "delete.retention.ms") != "1000", "excluded config was copied"
    assert topic_config(run.backup, backup_topic, "retention.bytes") == "1000", "retention.bytes was not copied"


def test_heartbeats_are_emitted_to_each_target_and_replicated_downstream(runners: dict[str, Runner]) -> None:
    """testReplication's heartbeat assertions, each one about the flow MM2 asserts it for."""
    run = runners["a"]
    wait_for_topic(run.backup, run.remote("test-topic-1"), run)
    time.sleep(2)  # emit.heartbeats.interval.seconds = 1
    # "Heartbeats were not emitted to primary/backup cluster": by the flow into that cluster.
    into_backup = [Heartbeat.from_bytes(m.key(), m.value()) for m in read_written(run.backup, "heartbeats", 1)]
    into_primary = [Heartbeat.from_bytes(m.key(), m.value()) for m in read_written(run.primary, "heartbeats", 1)]
    assert any((h.source_cluster_alias, h.target_cluster_alias) == ("primary", "backup") for h in into_backup)
    assert any((h.source_cluster_alias, h.target_cluster_alias) == ("backup", "primary") for h in into_primary)
    # "Heartbeats were not replicated downstream": each cluster's heartbeats, as a remote topic on the other.
    assert len(read_written(run.backup, "primary.heartbeats", 1)) > 0
    assert len(read_written(run.primary, "backup.heartbeats", 1)) > 0


def test_replication_with_empty_partition(runners: dict[str, Runner]) -> None:
    """testReplicationWithEmptyPartition: the records of nine partitions, and the group's failover on backup."""
    run = runners["a"]
    topic, remote = run.topic("test-topic-with-empty-partition"), run.remote("test-topic-with-empty-partition")
    group = run.group("testReplicationWithEmptyPartition")
    create_topic(run.primary, topic, NUM_PARTITIONS)
    produce_messages(run.primary, topic, partitions=NUM_PARTITIONS - 1)
    commit_end_offsets(run.primary, group, {topic: NUM_PARTITIONS})
    wait_for_topic(run.backup, remote, run)
    wait_for_count(run.backup, remote, NUM_RECORDS_PER_PARTITION * (NUM_PARTITIONS - 1))
    expected = {p: NUM_RECORDS_PER_PARTITION for p in range(NUM_PARTITIONS - 1)}
    assert per_partition(run.backup, remote) == {**expected, NUM_PARTITIONS - 1: 0}
    # MM2 checkpoints no partition that has no offset sync (OffsetSyncStore), so neither do we: the empty
    # partition's offset on backup comes from the consumer there (MM2's test reads it after its own commit).
    wait_for_checkpoints(run, group, "primary", remote, expected)
    wait_for_group_sync(run.backup, group, {(remote, p): o for p, o in expected.items()}, run)
    produce_messages(run.primary, topic, partitions=NUM_PARTITIONS)  # now every partition, the empty one too
    wait_for_count(run.backup, remote, NUM_RECORDS_PRODUCED + NUM_RECORDS_PER_PARTITION * (NUM_PARTITIONS - 1))
    read = read_as_group(run.backup, group, [remote])
    assert len(read) == NUM_RECORDS_PRODUCED, (
        "the group on backup reads what it had not read on primary, the empty partition's records included"
    )
    assert sum(1 for _, p in read if p == NUM_PARTITIONS - 1) == NUM_RECORDS_PER_PARTITION


def test_transactional_source_records_and_offsets_translate_past_markers(runners: dict[str, Runner]) -> None:
    """MirrorConnectorsIntegrationTransactionsTest: a transactional source; its commit markers are not copied, and
    a group at the source's end (markers counted) is synced to the remote topic's end."""
    run = runners["a"]
    topic, remote, group = run.topic("test-topic-tx"), run.remote("test-topic-tx"), run.group("transactions")
    create_topic(run.primary, topic, NUM_PARTITIONS)
    producer = Producer({"bootstrap.servers": run.primary, "transactional.id": f"embedded-kafka-0-{UID}"})
    producer.init_transactions(60)
    produce_transaction(producer, topic)
    produce_transaction(producer, topic)
    source_ends = end_offsets(run.primary, topic, range(NUM_PARTITIONS))
    assert set(source_ends.values()) == {2 * NUM_RECORDS_PER_PARTITION + 2}, "ten records and a marker, twice"
    commit_end_offsets(run.primary, group, {topic: NUM_PARTITIONS})
    wait_for_topic(run.backup, remote, run)
    wait_for_count(run.backup, remote, 2 * NUM_RECORDS_PRODUCED)
    assert count(run.backup, remote) == 2 * NUM_RECORDS_PRODUCED
    assert end_offsets(run.backup, remote, range(NUM_PARTITIONS)) == dict.fromkeys(
        range(NUM_PARTITIONS), 2 * NUM_RECORDS_PER_PARTITION
    ), "markers are not copied"
    ends = dict.fromkeys(range(NUM_PARTITIONS), 2 * NUM_RECORDS_PER_PARTITION)
    wait_for_checkpoints(run, group, "primary", remote, ends)
    wait_for_group_sync(run.backup, group, {(remote, p): o for p, o in ends.items()}, run)


def test_partitions_added_to_a_source_topic_are_added_to_its_remote_topic(runners: dict[str, Runner]) -> None:
    """testCreatePartitionsUseProvidedForwardingAdmin (without the forwarding admin, which is Java's)."""
    run = runners["a"]
    topic, remote = run.topic("test-topic-grow"), run.remote("test-topic-grow")
    wait_for_topic(run.backup, remote, run)
    client = admin(run.primary)
    client.create_partitions([NewPartitions(topic, NUM_PARTITIONS + 1)])[topic].result(timeout=30)
    wait_until(
        lambda: topic_partitions(run.backup, remote) == NUM_PARTITIONS + 1, 60, 0.5, "the new partition on backup"
    )
    producer = Producer({"bootstrap.servers": run.primary})
    for seq in range(NUM_RECORDS_PER_PARTITION):
        producer.produce(topic, f"new-{seq}".encode(), partition=NUM_PARTITIONS)
    assert producer.flush(30) == 0
    wait_for_count(run.backup, remote, NUM_RECORDS_PER_PARTITION, NUM_PARTITIONS + 1)
    assert per_partition(run.backup, remote, NUM_PARTITIONS + 1)[NUM_PARTITIONS] == NUM_RECORDS_PER_PARTITION


def test_topic_acls_are_synced_both_ways(runners: dict[str, Runner]) -> None:
    """testSyncTopicACLsUseProvidedForwardingAdmin: User:dummy's DESCRIBE on test-topic-1, on each remote topic."""
    run = runners["a"]
    backup_topic, reverse_topic = run.remote("test-topic-1"), run.remote("test-topic-1", "backup")

    def synced() -> bool:
        run.assert_running()
        return dummy_describe(backup_topic) in acls(run.backup, backup_topic) and dummy_describe(reverse_topic) in acls(
            run.primary, reverse_topic
        )

    wait_until(synced, 30, 0.5, "topic ACLs synced on both clusters")


# --- b: the base test's one-way scenarios -----------------------------------------------------------------------


def test_one_way_replication_with_auto_offset_sync(runners: dict[str, Runner]) -> None:
    """testOneWayReplicationWithAutoOffsetSync (offset.lag.max = 10): exact here, so 0 records read again."""
    _assert_one_way_offset_sync(runners["b"])


def _assert_one_way_offset_sync(run: Runner) -> None:
    group, backup_topic1 = run.group("offsetSync"), run.remote("test-topic-1")
    wait_for_topic(run.backup, backup_topic1, run)
    ends = {(backup_topic1, p): NUM_RECORDS_PER_PARTITION for p in range(NUM_PARTITIONS)}
    wait_for_count(run.backup, backup_topic1, NUM_RECORDS_PRODUCED)
    wait_for_group_sync(run.backup, group, ends, run)
    assert read_as_group(run.backup, group, [backup_topic1], idle_s=2) == [], "records read again on backup"

    # MM2's test-topic-2; another name here, as c's testReplication creates a test-topic-2 on the same clusters.
    topic2, remote2 = run.topic("test-topic-2-offset-sync"), run.remote("test-topic-2-offset-sync")
    create_topic(run.primary, topic2, NUM_PARTITIONS)
    wait_for_topic(run.backup, remote2, run)
    produce_messages(run.primary, topic2)
    commit_end_offsets(run.primary, group, {topic2: NUM_PARTITIONS})
    wait_for_count(run.backup, remote2, NUM_RECORDS_PRODUCED)
    both = {**ends, **{(remote2, p): NUM_RECORDS_PER_PARTITION for p in range(NUM_PARTITIONS)}}
    wait_for_group_sync(run.backup, group, both, run)
    assert read_as_group(run.backup, group, [backup_topic1, remote2], idle_s=2) == [], "records read again"
    assert_monotonic_checkpoints(run.backup, "primary.checkpoints.internal", group)
    if not run.identity:  # the disabled flow backup->primary creates nothing
        assert topic_partitions(run.primary, f"backup.{run.topic('test-topic-1')}") == 0


def test_group_offsets_are_synced_only_into_empty_groups(runners: dict[str, Runner]) -> None:
    """MirrorCheckpointTask syncs a group's offsets only while the target group is EMPTY (or absent)."""
    run = runners["b"]
    topic, remote, group = run.topic("test-topic-1"), run.remote("test-topic-1"), run.group("active")
    wait_for_count(run.backup, remote, NUM_RECORDS_PRODUCED)
    member = group_member(run.backup, group)
    member.subscribe([remote])
    try:
        wait_until(lambda: bool(member.poll(0.2) or member.assignment()), 30, what="the member's assignment")
        own = {(remote, p): 3 for p in range(NUM_PARTITIONS)}
        member.commit(offsets=[TopicPartition(t, p, o) for (t, p), o in own.items()], asynchronous=False)
        commit_end_offsets(run.primary, group, {topic: NUM_PARTITIONS})
        ends = dict.fromkeys(range(NUM_PARTITIONS), NUM_RECORDS_PER_PARTITION)
        wait_for_checkpoints(run, group, "primary", remote, ends)
        deadline = time.monotonic() + 4  # four sync intervals, the member polling all along
        while time.monotonic() < deadline:
            member.poll(0.2)
        assert committed(run.backup, group) == own, "an active group's offsets were overwritten"
    finally:
        member.close()
    wait_for_group_sync(run.backup, group, {(remote, p): o for p, o in ends.items()}, run)


def test_no_checkpoints_if_no_records_are_mirrored(runners: dict[str, Runner]) -> None:
    """testNoCheckpointsIfNoRecordsAreMirrored."""
    run = runners["b"]
    group = run.group("no-checkpoints")
    tp1, tp2 = run.topic("test-topic-1"), run.topic("test-topic-no-checkpoints")
    remote1, remote2 = run.remote("test-topic-1"), run.remote("test-topic-no-checkpoints")
    wait_for_topic(run.backup, remote1, run)
    wait_for_topic(run.backup, remote2, run)
    wait_for_count(run.backup, remote1, NUM_RECORDS_PRODUCED)
    commit(run.primary, group, {(tp1, 0): NUM_RECORDS_PER_PARTITION, (tp2, 0): 0})
    wait_for_checkpoints(run, group, "primary", remote1, {0: NUM_RECORDS_PER_PARTITION})
    time.sleep(3)  # three checkpoint intervals
    assert translated(run, group, "primary", remote2) == {}, "a checkpoint for a topic with no mirrored record"
    produce_messages(run.primary, tp2, partitions=1, per_partition=NUM_RECORDS_PRODUCED)
    commit(run.primary, group, {(tp1, 0): NUM_RECORDS_PER_PARTITION, (tp2, 0): NUM_RECORDS_PRODUCED})
    wait_for_checkpoints(run, group, "primary", remote2, {0: NUM_RECORDS_PRODUCED})
    assert translated(run, group, "primary", remote1) == {0: NUM_RECORDS_PER_PARTITION}


def test_offset_translation_behind_replication_flow(runners: dict[str, Runner]) -> None:
    """testOffsetTranslationBehindReplicationFlow: 100 rounds of records, then the group at 90 % and at 10 %:
    the checkpoints advance, then rewind, to the exact offsets."""
    run = runners["b"]
    topic, remote, group = run.topic("test-topic-behind"), run.remote("test-topic-behind"), run.group("behind")
    create_topic(run.primary, topic, NUM_PARTITIONS)
    produce_messages(run.primary, topic)
    commit_end_offsets(run.primary, group, {topic: NUM_PARTITIONS})
    wait_for_topic(run.backup, remote, run)
    initial = wait_for_checkpoints(
        run, group, "primary", remote, dict.fromkeys(range(NUM_PARTITIONS), NUM_RECORDS_PER_PARTITION)
    )
    iterations = 100
    produce_messages(run.primary, topic, per_partition=(iterations - 1) * NUM_RECORDS_PER_PARTITION)
    total = iterations * NUM_RECORDS_PRODUCED
    wait_for_count(run.backup, remote, total)
    assert count(run.backup, remote) == total, "Records were not replicated to backup cluster."
    per = iterations * NUM_RECORDS_PER_PARTITION
    commit(run.primary, group, {(topic, p): int(per * 0.9) for p in range(NUM_PARTITIONS)})
    partial = wait_for_checkpoints(run, group, "primary", remote, dict.fromkeys(range(NUM_PARTITIONS), int(per * 0.9)))
    assert all(initial[p] < partial[p] for p in range(NUM_PARTITIONS)), "checkpoints advance with the group"
    assert_monotonic_checkpoints(run.backup, "primary.checkpoints.internal", group)
    commit(run.primary, group, {(topic, p): int(per * 0.1) for p in range(NUM_PARTITIONS)})
    final = wait_for_checkpoints(run, group, "primary", remote, dict.fromkeys(range(NUM_PARTITIONS), int(per * 0.1)))
    assert all(final[p] < partial[p] for p in range(NUM_PARTITIONS)), "checkpoints rewind with the group"


def test_sync_topic_configs(runners: dict[str, Runner]) -> None:
    """testSyncTopicConfigs: an excluded config altered on the target stays; an included one is put back."""
    run = runners["b"]
    topic, remote = run.topic("test-topic-with-config"), run.remote("test-topic-with-config")
    create_topic(run.primary, topic, NUM_PARTITIONS, {"delete.retention.ms": "1000", "retention.bytes": "1000"})
    wait_for_topic(run.backup, remote, run)
    alter_topic_config(run.backup, remote, AlterConfigOpType.SET, delete_retention_ms="2000", retention_bytes="2000")

    def synced() -> bool:
        return (
            topic_config(run.backup, remote, "delete.retention.ms") == "2000"
            and topic_config(run.backup, remote, "retention.bytes") == "1000"
        )

    wait_until(synced, 30, 0.5, "Topic configurations were not synced")


def test_replicate_target_default(runners: dict[str, Runner]) -> None:
    """testReplicateTargetDefault: a source override is copied; once deleted, the target's default returns."""
    run = runners["b"]
    topic, remote = run.topic("test-topic-target-default"), run.remote("test-topic-target-default")
    create_topic(run.primary, topic, NUM_PARTITIONS, {"retention.bytes": "1000"})
    wait_for_topic(run.backup, remote, run)
    wait_until(lambda: topic_config(run.backup, remote, "retention.bytes") == "1000", 30, 0.5, "retention.bytes")
    alter_topic_config(run.primary, topic, AlterConfigOpType.DELETE, retention_bytes="1000")
    wait_until(lambda: topic_config(run.backup, remote, "retention.bytes") == "-1", 30, 0.5, "the target's default")


def test_restart_replication(runners: dict[str, Runner]) -> None:
    """testRestartReplication: group offsets synced, the runner restarted (SIGTERM and start), then synced again
    to the new end, with monotonic checkpoints and no record copied twice. Runs last of runner b's scenarios."""
    run = runners["b"]
    topic, remote, group = run.topic("test-topic-restart"), run.remote("test-topic-restart"), run.group("restart")
    create_topic(run.primary, topic, NUM_PARTITIONS)
    produce_messages(run.primary, topic)
    commit_end_offsets(run.primary, group, {topic: NUM_PARTITIONS})
    wait_for_topic(run.backup, remote, run)
    wait_for_group_sync(run.backup, group, {(remote, p): NUM_RECORDS_PER_PARTITION for p in range(NUM_PARTITIONS)}, run)
    assert run.stop() == 0, run.tail()
    run.start()
    assert_monotonic_checkpoints(run.backup, "primary.checkpoints.internal", group)
    produce_messages(run.primary, topic)
    commit_end_offsets(run.primary, group, {topic: NUM_PARTITIONS})
    twice = {(remote, p): 2 * NUM_RECORDS_PER_PARTITION for p in range(NUM_PARTITIONS)}
    wait_for_group_sync(run.backup, group, twice, run)
    assert_monotonic_checkpoints(run.backup, "primary.checkpoints.internal", group)
    assert count(run.backup, remote) == 2 * NUM_RECORDS_PRODUCED


# --- c: IdentityReplicationIntegrationTest ----------------------------------------------------------------------


def test_identity_replication(runners: dict[str, Runner]) -> None:
    """testReplication under IdentityReplicationPolicy, one way: into backup's own test-topic-1."""
    _assert_replication(runners["c"], both_ways=False)


def test_identity_replication_with_frequent_offset_syncs(runners: dict[str, Runner]) -> None:
    """testOneWayReplicationWithFrequentOffsetSyncs (offset.lag.max = 0) under IdentityReplicationPolicy."""
    _assert_one_way_offset_sync(runners["c"])


# --- d: use.defaults.from = source, auto.offset.reset = latest, no offset syncs -----------------------------------


def test_replicate_source_default(runners: dict[str, Runner]) -> None:
    """testReplicateSourceDefault: a config the source leaves at its default is the source's default on the target,
    even after the target's was altered; the excluded one keeps the target's value."""
    run = runners["d"]
    topic, remote = run.topic("test-topic-with-config"), run.remote("test-topic-with-config")
    create_topic(run.primary, topic, NUM_PARTITIONS)
    wait_for_topic(run.backup, remote, run)
    alter_topic_config(run.backup, remote, AlterConfigOpType.SET, delete_retention_ms="2000", retention_bytes="2000")

    def synced() -> bool:
        source = topic_config(run.primary, topic, "retention.bytes")
        return (
            source == "-1"
            and topic_config(run.backup, remote, "retention.bytes") == source
            and topic_config(run.backup, remote, "delete.retention.ms") == "2000"
        )

    wait_until(synced, 30, 0.5, "Topic configurations were not synced")


def test_replicate_from_latest(runners: dict[str, Runner]) -> None:
    """testReplicateFromLatest: with primary.consumer.auto.offset.reset = latest, only what was produced after the
    task started is replicated, exactly NUM_RECORDS_PER_PARTITION per partition."""
    run = runners["d"]
    sentinel, remote_sentinel = run.topic("test-topic-sentinel"), run.remote("test-topic-sentinel")
    wait_for_topic(run.backup, remote_sentinel, run)
    producer = Producer({"bootstrap.servers": run.primary})

    def sentinel_arrived() -> bool:
        producer.produce(sentinel, b"sentinel-value")
        producer.flush(10)
        return sum(end_offsets(run.backup, remote_sentinel, [0]).values()) > 0

    wait_until(sentinel_arrived, RECORD_TRANSFER_S, 1.0, "Records were not produced to sentinel topic in time")
    topic, remote = run.topic("test-topic-1"), run.remote("test-topic-1")
    produce_messages(run.primary, topic)
    wait_for_count(run.backup, remote, NUM_RECORDS_PRODUCED)
    assert per_partition(run.backup, remote) == dict.fromkeys(range(NUM_PARTITIONS), NUM_RECORDS_PER_PARTITION)


def test_replication_without_offset_syncs_creates_no_offset_syncs_topic(runners: dict[str, Runner]) -> None:
    """testReplicationWithoutOffsetSyncWillNotCreateOffsetSyncsTopic (emit.offset-syncs.enabled = false)."""
    run = runners["d"]
    wait_for_topic(run.backup, run.remote("test-topic-1"), run)
    run.assert_running()
    assert topic_partitions(run.primary, "mm2-offset-syncs.backup.internal") == 0


# --- e: MirrorConnectorsIntegrationExactlyOnceTest --------------------------------------------------------------


def test_exactly_once_replication(runners: dict[str, Runner]) -> None:
    """testReplication with `<alias>.exactly.once.source.support = enabled` on both clusters, and the remote topics
    read read_committed; MM2's KIP-875 offset resets that follow it have no counterpart here."""
    _assert_replication(runners["e"], both_ways=True)


def test_offset_syncs_topic_on_target(runners: dict[str, Runner]) -> None:
    """testOffsetSyncsTopicsOnTarget (`primary->backup.offset-syncs.topic.location = target`): the offset syncs are
    in backup's `mm2-offset-syncs.primary.internal`, none in primary's, and the checkpoints come from them. Other
    runners write offset syncs to primary (their location is the source): none there may be of this runner's topics."""
    run = runners["c"]
    topic, remote = run.topic("test-topic-1"), run.remote("test-topic-1")
    wait_for_count(run.backup, remote, NUM_RECORDS_PRODUCED)
    group = run.group("syncs-on-target")
    commit_end_offsets(run.primary, group, {topic: NUM_PARTITIONS})
    ends = dict.fromkeys(range(NUM_PARTITIONS), NUM_RECORDS_PER_PARTITION)
    wait_for_checkpoints(run, group, "primary", remote, ends)
    assert_monotonic_checkpoints(run.backup, "primary.checkpoints.internal", group)
    on_target = offset_syncs(run.backup, "mm2-offset-syncs.primary.internal")
    assert {s.partition for s in on_target if s.topic == topic} == set(range(NUM_PARTITIONS))
    if topic_partitions(run.primary, "mm2-offset-syncs.backup.internal"):
        assert not [s for s in offset_syncs(run.primary, "mm2-offset-syncs.backup.internal") if s.topic == topic]
    assert topic_partitions(run.primary, "mm2-offset-syncs.primary.internal") == 0


def offset_syncs(bootstrap: str, topic: str) -> list[OffsetSync]:
    records = read_written(bootstrap, topic, topic_partitions(bootstrap, topic), timeout=30)
    return [OffsetSync.from_bytes(m.key(), m.value()) for m in records]
