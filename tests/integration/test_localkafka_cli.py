"""`python -m localkafka up` / `status` / `down` leaves nothing behind, on Kafka 4 (KRaft, the default), on 2.3.0
(ZooKeeper) and on a mixed pair."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from confluent_kafka.admin import NewTopic

from localkafka.cluster import port_open
from localkafka.dist import DEFAULT_KAFKA_VERSION, VERSION_ENV
from tests.support.kafka import admin

pytestmark = pytest.mark.kafka
REPO = Path(__file__).resolve().parents[2]


def _cli(state: Path, *args: str, version: str | None = None) -> subprocess.CompletedProcess[str]:
    cmd = [
        sys.executable,
        "-m",
        "localkafka",
        "--state-dir",
        str(state),
        "--port-base",
        "27092",
        "--zk-port-base",
        "27181",
        *args,
    ]
    env = {k: v for k, v in os.environ.items() if k != VERSION_ENV}
    if version:
        env[VERSION_ENV] = version
    return subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False)


def _java_pids_for(state: Path) -> list[int]:
    pids = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmdline = (proc / "cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if str(state) in cmdline and "java" in cmdline:
                pids.append(int(proc.name))
    return pids


def _zookeeper_pids_for(state: Path) -> list[int]:
    return [p for p in _java_pids_for(state) if b"QuorumPeerMain" in Path(f"/proc/{p}/cmdline").read_bytes()]


def test_up_with_no_version_starts_kraft_clusters_and_down_leaves_no_process_and_no_port(tmp_path: Path) -> None:
    state = tmp_path / "lk"
    up = _cli(state, "up", "--clusters", "alpha,beta")
    try:
        assert up.returncode == 0, up.stderr
        assert up.stdout.splitlines() == ["alpha=127.0.0.1:27092", "beta=127.0.0.1:27093"]
        assert (state / "state.json").exists()
        assert len(admin("127.0.0.1:27093").list_topics(timeout=10).brokers) == 1
        status = _cli(state, "status")
        assert f"alpha=127.0.0.1:27092 broker=ready kraft version={DEFAULT_KAFKA_VERSION}" in status.stdout
        assert len(_java_pids_for(state)) == 2  # one combined broker and controller per cluster
        assert _zookeeper_pids_for(state) == []
        ids = {admin(f"127.0.0.1:{p}").list_topics(timeout=10).cluster_id for p in (27092, 27093)}
        assert len(ids) == 2  # each cluster formatted with an id of its own
    finally:
        down = _cli(state, "down", "--purge")
    assert down.returncode == 0, down.stderr
    assert _java_pids_for(state) == []
    assert not any(port_open(p) for p in (27092, 27093, 27181, 27182))


def test_the_version_variable_starts_2_3_0_with_zookeeper_and_a_mixed_pair_runs_both(tmp_path: Path) -> None:
    state = tmp_path / "lk"
    up = _cli(state, "up", "--clusters", "old,new:4.3.1", version="2.3.0")
    try:
        assert up.returncode == 0, up.stderr
        status = _cli(state, "status").stdout
        assert "old=127.0.0.1:27092 broker=ready zookeeper=up version=2.3.0" in status
        assert "new=127.0.0.1:27093 broker=ready kraft version=4.3.1" in status
        assert len(_zookeeper_pids_for(state)) == 1
        assert len(_java_pids_for(state)) == 3
    finally:
        down = _cli(state, "down", "--purge")
    assert down.returncode == 0, down.stderr
    assert _java_pids_for(state) == []


def test_classpath_runs_kafkas_own_tools(tmp_path: Path) -> None:
    printed = _cli(tmp_path, "classpath")
    assert printed.returncode == 0, printed.stderr
    classpath = printed.stdout.strip()
    assert f"kafka-tools-{DEFAULT_KAFKA_VERSION}.jar" in classpath
    tool = subprocess.run(
        ["java", "-cp", classpath, "org.apache.kafka.tools.VerifiableProducer", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert "--bootstrap-server" in tool.stdout + tool.stderr
    legacy = _cli(tmp_path, "classpath", version="2.3.0")
    assert legacy.stdout.strip().endswith("kafka_2.12-2.3.0/libs/*")
    assert "kafka_2.12-2.3.0/bin" in legacy.stderr


def test_a_bad_alias_or_version_is_an_error_naming_it(tmp_path: Path) -> None:
    result = _cli(tmp_path, "up", "--clusters", "ok,not ok")
    assert result.returncode == 1
    assert "alias: 'not ok'" in result.stderr
    result = _cli(tmp_path, "up", "--clusters", "ok:2.8.1")
    assert result.returncode == 1
    assert "Kafka version '2.8.1'" in result.stderr
    assert _java_pids_for(tmp_path) == []


@pytest.mark.parametrize("version", [DEFAULT_KAFKA_VERSION, pytest.param("2.3.0", marks=pytest.mark.slow)])
def test_up_after_a_sigkill_of_every_process_starts_again_on_the_same_data(tmp_path: Path, version: str) -> None:
    """On 2.3.0 the killed broker's ZooKeeper session outlives a ZooKeeper restart for its timeout, and a broker
    started at once used to exit on the stale /brokers/ids/0; a KRaft cluster restarts on its metadata log."""
    state = tmp_path / "lk"
    try:
        assert _cli(state, "up", "--clusters", "alpha", version=version).returncode == 0
        client = admin("127.0.0.1:27092")
        client.create_topics([NewTopic("kept", 1, 1)])["kept"].result(timeout=30)
        for pid in _java_pids_for(state):
            os.kill(pid, signal.SIGKILL)
        again = _cli(state, "up", "--clusters", "alpha", version=version)
        assert again.returncode == 0, again.stderr
        assert "kept" in admin("127.0.0.1:27092").list_topics(timeout=10).topics
    finally:
        _cli(state, "down", "--purge")
