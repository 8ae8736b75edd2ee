"""The demo's traffic generator really stops producing when paused (end offsets stop moving) and resumes, and its
consumer group (the demo's application) leaves the group while paused."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from pathlib import Path

from confluent_kafka import KafkaException

from localkafka.traffic import TrafficControl
from tests.support.failover import committed
from tests.support.kafka import admin, create_topic, end_offsets, unique_topic, wait_until

QUIET_SECONDS = 2.0  # several times the generator's check interval and its producer's linger


def end(bootstrap: str, topic: str) -> int:
    return end_offsets(bootstrap, topic, [0])[0]


def moving(bootstrap: str, topic: str, seconds: float = 1.0) -> bool:
    before = end(bootstrap, topic)
    time.sleep(seconds)
    return end(bootstrap, topic) > before


def test_pausing_the_generator_stops_its_records_and_resuming_restarts_them(
    kafka_clusters: dict[str, str], tmp_path: Path
) -> None:
    bootstrap = kafka_clusters["us-west"]
    topic = unique_topic("traffic")
    create_topic(bootstrap, topic)
    control = TrafficControl(tmp_path / "control")
    argv = [
        sys.executable,
        "-m",
        "localkafka.traffic",
        "--bootstrap",
        bootstrap,
        "--topic",
        topic,
        "--rate",
        "50",
        "--control",
        str(control.directory),
    ]
    generator = subprocess.Popen(argv)
    try:
        wait_until(lambda: control.status() is not None, 30, what="the generator's status")
        wait_until(lambda: moving(bootstrap, topic), 30, what="records flowing")

        control.request(paused=True)
        wait_until(lambda: (control.status() or {}).get("paused"), 10, what="the generator to report paused")
        stopped_at = end(bootstrap, topic)
        time.sleep(QUIET_SECONDS)
        assert end(bootstrap, topic) == stopped_at, "records kept arriving while paused"

        control.request(paused=False)
        wait_until(lambda: end(bootstrap, topic) > stopped_at, 10, what="records after resuming")
        assert (control.status() or {}).get("paused") is False
    finally:
        generator.terminate()
        generator.wait(30)
    assert control.status() is None  # the status goes with the generator


def committed_or_none(bootstrap: str, group: str, topic: str) -> int | None:
    """The group's committed offset, or None while the broker cannot say yet (its coordinator still loading, on
    clusters just started)."""
    try:
        return committed(bootstrap, group, topic, 1)[0]
    except KafkaException:
        return None


def members(bootstrap: str, group: str) -> int:
    client = admin(bootstrap)  # kept alive until the future resolves
    return len(client.describe_consumer_groups([group])[group].result(timeout=30).members)


def test_the_generators_group_reads_and_commits_and_leaves_while_paused(
    kafka_clusters: dict[str, str], tmp_path: Path
) -> None:
    """`--group`: the demo's application. It commits what it read while traffic runs; paused, it has left the group
    with what it read committed, and commits nothing more (the wizard's fence needs no member); resumed, it joins
    and reads again."""
    bootstrap = kafka_clusters["us-west"]
    topic, group = unique_topic("app"), f"app-{uuid.uuid4().hex[:6]}"
    create_topic(bootstrap, topic)
    control = TrafficControl(tmp_path / "control")
    argv = [sys.executable, "-m", "localkafka.traffic", "--bootstrap", bootstrap, "--topic", topic, "--rate", "50"]
    generator = subprocess.Popen([*argv, "--group", group, "--control", str(control.directory)])
    try:
        wait_until(lambda: (control.status() or {}).get("group") == group, 30, what="the generator's status")
        wait_until(lambda: (committed_or_none(bootstrap, group, topic) or 0) > 0, 60, what="the group's first commit")
        assert members(bootstrap, group) == 1

        control.request(paused=True)
        wait_until(lambda: (control.status() or {}).get("paused"), 30, what="the generator to report paused")
        assert members(bootstrap, group) == 0  # it left before the generator said paused
        at_pause = committed(bootstrap, group, topic, 1)[0]
        assert 0 < at_pause <= end(bootstrap, topic)
        time.sleep(QUIET_SECONDS)
        assert committed(bootstrap, group, topic, 1)[0] == at_pause  # nothing reads or commits while paused

        control.request(paused=False)
        wait_until(lambda: members(bootstrap, group) == 1, 30, what="the group's member back")
        stopped_at = end(bootstrap, topic)
        wait_until(
            lambda: (committed_or_none(bootstrap, group, topic) or 0) > stopped_at, 30, what="commits after resuming"
        )
    finally:
        generator.terminate()
        generator.wait(30)
    assert members(bootstrap, group) == 0  # it leaves the group when it exits
