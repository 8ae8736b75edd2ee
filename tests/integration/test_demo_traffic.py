"""The demo's traffic generator really stops producing when paused (end offsets stop moving) and resumes."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from localkafka.traffic import TrafficControl
from tests.support.kafka import create_topic, end_offsets, unique_topic, wait_until

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
