"""Kafka's own mirror-client on the test clusters: `Harness.java` run by Java 17's source launcher on the Kafka
Maven classpath, and what it prints read back as plain Python values."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

from localkafka.dist import DEFAULT_KAFKA_VERSION, runtime
from localkafka.manager import default_cache_dir

HARNESS = Path(__file__).resolve().parent / "java" / "Harness.java"
Offsets = dict[tuple[str, int], int]  # (topic, partition) -> offset


@dataclass(frozen=True)
class JavaView:
    """What Kafka's MirrorClient and RemoteClusterUtils answer about one target cluster and one remote alias."""

    remote_topics: set[str]
    checkpoint_topics: set[str]
    upstream_clusters: set[str]
    replication_hops: int
    translated: dict[str, Offsets]  # group -> RemoteClusterUtils.translateOffsets


def java_view(target_bootstrap: str, remote_alias: str, groups: list[str], timeout: float = 180.0) -> JavaView:
    kafka = runtime(DEFAULT_KAFKA_VERSION, default_cache_dir())
    command = [kafka.java, "-Xmx256m", "-cp", kafka.classpath, str(HARNESS), target_bootstrap, remote_alias, *groups]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    assert done.returncode == 0, f"Harness.java exited {done.returncode}:\n{done.stderr[-4000:]}"
    data = json.loads(done.stdout.strip().splitlines()[-1])
    return JavaView(
        remote_topics=set(data["remoteTopics"]),
        checkpoint_topics=set(data["checkpointTopics"]),
        upstream_clusters=set(data["upstreamClusters"]),
        replication_hops=int(data["replicationHops"]),
        translated={group: _offsets(found) for group, found in data["translateOffsets"].items()},
    )


def _offsets(found: dict[str, int]) -> Offsets:
    """{"topic-3": 40} -> {("topic", 3): 40}: the partition is after the last dash, as TopicPartition prints it."""
    return {(key.rsplit("-", 1)[0], int(key.rsplit("-", 1)[1])): int(offset) for key, offset in found.items()}
