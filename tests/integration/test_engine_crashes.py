"""No loss under SIGKILL, zombie fencing, and the standalone CLI, on real clusters."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from replication.errors import ReplicationError
from replication.kafka.clients import position_reader_config
from replication.kafka.positions import load, positions_topic
from tests.support.kafka import consume_to_end, create_topic, end_offsets, unique_topic, wait_until
from tests.support.replication import (
    drive,
    drive_for,
    make_flow,
    new_task,
    produce_known,
    record_value,
    start_replicator,
)

pytestmark = [pytest.mark.kafka, pytest.mark.compat]
REPO = Path(__file__).resolve().parents[2]
PARTITIONS = 4


def _write_config(path: Path, clusters: dict[str, str], topic: str, exactly_once: bool) -> Path:
    path.write_text(
        "clusters = us-west, backup\n"
        f"us-west.bootstrap.servers = {clusters['us-west']}\n"
        f"backup.bootstrap.servers = {clusters['backup']}\n"
        "us-west->backup.enabled = true\n"
        f"us-west->backup.topics = {topic}\n"
        f"us-west->backup.exactly.once = {str(exactly_once).lower()}\n"
        "us-west->backup.emit.heartbeats.enabled = false\n"
        "us-west->backup.emit.checkpoints.enabled = false\n"
        "offset.flush.interval.ms = 200\n"
    )
    return path


def _stored_all(clusters: dict[str, str], topic: str, total: dict[int, int]) -> bool:
    flow = make_flow(clusters, "us-west", "backup", topic)
    stored = load(position_reader_config(flow, 0), positions_topic("us-west"), timeout=30)
    return all(stored.get((topic, p)) is not None and stored[(topic, p)].next_offset == n for p, n in total.items())


# At least once, three SIGKILLs run in make test (test_resume_crashes.py, plain); five run in make test-faults.
@pytest.mark.parametrize(
    "exactly_once", [pytest.param(False, marks=pytest.mark.slow), True], ids=["at-least-once", "exactly-once"]
)
def test_sigkill_five_times_loses_nothing_and_duplicates_nothing(
    kafka_clusters: dict[str, str], tmp_path: Path, exactly_once: bool
) -> None:
    src, dst = kafka_clusters["us-west"], kafka_clusters["backup"]
    topic, count = unique_topic("kill"), 500_000
    create_topic(src, topic, partitions=PARTITIONS)
    produce_known(src, topic, PARTITIONS, count)
    config = _write_config(tmp_path / "mm2.properties", kafka_clusters, topic, exactly_once)
    remote, log = f"us-west.{topic}", tmp_path / "replication.log"
    seed = int(os.environ.get("MIRRORPLANE_KILL_SEED", random.randrange(1 << 30)))
    kill_points = sorted(random.Random(seed).sample(range(20_000, 480_000), 5))

    def replicated() -> int:
        try:
            return sum(end_offsets(dst, remote, range(PARTITIONS)).values())
        except Exception:
            return 0

    for point in kill_points:
        proc = start_replicator(config, log)
        wait_until(
            lambda p=point, proc=proc: replicated() >= p or proc.poll() is not None,
            timeout=120,
            what=f"{point} records",
        )
        assert proc.poll() is None, f"replication exited early (seed {seed}): {log.read_text()[-2000:]}"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    proc = start_replicator(config, log)
    total = end_offsets(src, topic, range(PARTITIONS))
    wait_until(lambda: _stored_all(kafka_clusters, topic, total), timeout=180, interval=1, what="all positions stored")
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 0, log.read_text()[-2000:]

    isolation = "read_committed" if exactly_once else "read_uncommitted"
    target = consume_to_end(dst, remote, PARTITIONS, isolation=isolation)
    by_partition: dict[int, list[bytes]] = defaultdict(list)
    for msg in target:
        by_partition[msg.partition()].append(msg.value())
    for p in range(PARTITIONS):
        expected = [record_value(p, seq) for seq in range(count // PARTITIONS)]
        got = by_partition[p]
        assert set(got) == set(expected), f"partition {p}: {len(set(expected) - set(got))} lost (seed {seed})"
        # At least once too: a restart skips what the target already holds (replication.task.resume).
        assert got == expected, f"partition {p}: {len(got) - len(set(got))} duplicates or disorder (seed {seed})"


def test_a_second_exactly_once_instance_fences_the_first_and_nothing_is_duplicated(
    kafka_clusters: dict[str, str],
) -> None:
    src, dst = kafka_clusters["us-east"], kafka_clusters["us-west"]
    topic, count = unique_topic("zombie"), 30_000
    create_topic(src, topic, partitions=2)
    produce_known(src, topic, 2, count)
    flow = make_flow(kafka_clusters, "us-east", "us-west", topic, exactly_once=True)
    flow = flow.replace(emit_heartbeats_enabled=False, emit_checkpoints_enabled=False)
    remote = f"us-east.{topic}"
    zombie = new_task(flow)
    zombie.batch_size = 1000
    drive(
        [zombie],
        lambda: sum(end_offsets(dst, remote, range(2)).values()) >= 5000,
        what="the first instance replicating",
    )
    successor = new_task(flow)  # same transactional.id: its init_transactions bumps the epoch
    with pytest.raises(ReplicationError, match=r"(?i)fenc|epoch"):
        drive_for([zombie], 200)
    successor.batch_size = 1000
    ours = lambda: [s for k, s in successor.states.items() if k[0] == topic]  # noqa: E731  (heartbeats replicate too)
    drive([successor], lambda: len(ours()) == 2 and all(s.stored_next == count // 2 for s in ours()))
    successor.close()
    records = consume_to_end(dst, remote, 2, isolation="read_committed")
    values = [m.value() for m in records]
    assert len(values) == count and len(set(values)) == count


def test_cli_rejects_an_unknown_property_naming_it(tmp_path: Path) -> None:
    config = tmp_path / "bad.properties"
    config.write_text(
        "clusters = a, b\na.bootstrap.servers = x:1\nb.bootstrap.servers = y:1\na->b.enabled = true\n"
        "a->b.topicz = orders\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "replication", "run", "--config", str(config)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert "a->b.topicz" in result.stderr and "unknown" in result.stderr
