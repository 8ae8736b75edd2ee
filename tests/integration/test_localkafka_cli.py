"""`python -m localkafka up` / `status` / `down` leaves nothing behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from confluent_kafka.admin import NewTopic

from localkafka.cluster import port_open
from tests.support.kafka import admin

pytestmark = pytest.mark.kafka
REPO = Path(__file__).resolve().parents[2]


def _cli(state: Path, *args: str) -> subprocess.CompletedProcess[str]:
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
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=180, check=False)


def _java_pids_for(state: Path) -> list[int]:
    pids = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmdline = (proc / "cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if str(state) in cmdline:
                pids.append(int(proc.name))
    return pids


def test_up_status_down_leaves_no_process_and_no_port(tmp_path: Path) -> None:
    state = tmp_path / "lk"
    up = _cli(state, "up", "--clusters", "alpha,beta")
    try:
        assert up.returncode == 0, up.stderr
        assert up.stdout.splitlines() == ["alpha=127.0.0.1:27092", "beta=127.0.0.1:27093"]
        assert (state / "state.json").exists()
        assert len(admin("127.0.0.1:27093").list_topics(timeout=10).brokers) == 1
        status = _cli(state, "status")
        assert "alpha=127.0.0.1:27092 broker=ready zookeeper=up" in status.stdout
        assert len(_java_pids_for(state)) == 4
    finally:
        down = _cli(state, "down", "--purge")
    assert down.returncode == 0, down.stderr
    assert _java_pids_for(state) == []
    assert not any(port_open(p) for p in (27092, 27093, 27181, 27182))


def test_a_bad_alias_is_an_error_naming_it(tmp_path: Path) -> None:
    result = _cli(tmp_path, "up", "--clusters", "ok,not ok")
    assert result.returncode == 1
    assert "alias: 'not ok'" in result.stderr
    assert _java_pids_for(tmp_path) == []


def test_up_after_a_sigkill_of_broker_and_zookeeper_starts_again_on_the_same_data(tmp_path: Path) -> None:
    """The killed broker's ZooKeeper session outlives a ZooKeeper restart for its timeout; a broker started at once
    used to exit on the stale /brokers/ids/0 (a `make demo` right after a killed one failed so)."""
    state = tmp_path / "lk"
    try:
        assert _cli(state, "up", "--clusters", "alpha").returncode == 0
        client = admin("127.0.0.1:27092")
        client.create_topics([NewTopic("kept", 1, 1)])["kept"].result(timeout=30)
        for pid in _java_pids_for(state):
            os.kill(pid, signal.SIGKILL)
        again = _cli(state, "up", "--clusters", "alpha")
        assert again.returncode == 0, again.stderr
        assert "kept" in admin("127.0.0.1:27092").list_topics(timeout=10).topics
    finally:
        _cli(state, "down", "--purge")
