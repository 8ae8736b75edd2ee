"""localkafka's MirrorMaker 2 runner: Apache's dedicated MM2 from Maven Central copies a topic between two local
clusters with KIP-382's names, and stops on SIGTERM."""

from __future__ import annotations

from pathlib import Path

import pytest

from localkafka.mirrormaker2 import MirrorMaker2, dedicated_properties
from tests.support.browse import produce
from tests.support.kafka import create_topic, end_offsets, unique_topic, wait_until


@pytest.mark.slow  # the MM2 interop, take-over and benchmark runs use the runner in make test
def test_mm2_copies_a_topic_under_its_remote_name(kafka_clusters: dict[str, str], tmp_path: Path) -> None:
    topic = unique_topic("mm2run")
    create_topic(kafka_clusters["us-west"], topic, partitions=2)
    produce(kafka_clusters["us-west"], topic, {0: 30, 1: 20})
    clusters = {"us-west": kafka_clusters["us-west"], "us-east": kafka_clusters["us-east"]}
    props = dedicated_properties(clusters, [("us-west", "us-east")], {"us-west->us-east.topics": topic})
    mm2 = MirrorMaker2(props, tmp_path)
    with mm2:
        remote = f"us-west.{topic}"
        wait_until(
            lambda: _ends(kafka_clusters["us-east"], remote) == {0: 30, 1: 20},
            timeout=120,
            interval=1,
            what=f"MM2 to copy 50 records to {remote}:\n{mm2.log_tail()}",
        )
    assert mm2.proc is not None and mm2.proc.returncode in (0, 130, 143), mm2.log_tail()


def _ends(bootstrap: str, topic: str) -> dict[int, int] | None:
    try:
        return end_offsets(bootstrap, topic, [0, 1], timeout=5)
    except Exception:  # not created yet
        return None
