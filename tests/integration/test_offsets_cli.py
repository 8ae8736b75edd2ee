"""`python -m replication offsets translate`: the table, and a CSV that Kafka's own reset-offsets tool accepts."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from localkafka.dist import runtime
from localkafka.manager import default_cache_dir
from replication.__main__ import main
from tests.support.kafka import create_topic, end_offsets, unique_topic
from tests.support.replication import make_flow, produce_known
from tests.support.translation import committed, place_groups, replicate

pytestmark = pytest.mark.kafka


def _properties(path: Path, clusters: dict[str, str], topic: str) -> Path:
    path.write_text(
        "clusters = us-east, backup\n"
        f"us-east.bootstrap.servers = {clusters['us-east']}\n"
        f"backup.bootstrap.servers = {clusters['backup']}\n"
        "us-east->backup.enabled = true\n"
        f"us-east->backup.topics = {topic}\n"
    )
    return path


def test_translate_prints_a_table_and_a_csv_that_kafka_consumer_groups_resets_from(
    kafka_clusters: dict[str, str],
    kafka_versions: dict[str, str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    src, dst = kafka_clusters["us-east"], kafka_clusters["backup"]
    topic = unique_topic("cli")
    create_topic(src, topic, partitions=2)
    produce_known(src, topic, partitions=2, count=1000)
    flow = make_flow(kafka_clusters, "us-east", "backup", topic)
    replicate(flow, lambda: sum(end_offsets(dst, f"us-east.{topic}", range(2)).values()) >= 1000, "1000 records")
    produce_known(src, topic, partitions=2, count=200, start=1000)  # not replicated: partition 1 gets ahead
    group = place_groups(src, unique_topic("cli-grp"), topic, {0: [300], 1: [550]})[0]
    config = _properties(tmp_path / "mm2.properties", kafka_clusters, topic)
    args = ["offsets", "translate", "--config", str(config), "--group", group, "--source", "us-east"]

    assert main([*args, "--target", "backup"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[1].split() == [topic, "0", "300", f"us-east.{topic}", "300", "sync", "200"]
    assert table[2].split()[:6] == [topic, "1", "550", f"us-east.{topic}", "500", "timestamp"]
    assert table[-1].startswith(f"{topic}-1: approximate") and "ahead of replication" in table[-1]

    assert main([*args, "--target", "backup", "--format", "csv"]) == 0
    out, err = capsys.readouterr()
    assert out == f"us-east.{topic},0,300\nus-east.{topic},1,500\n"
    assert f"us-east.{topic},1 is approximate" in err
    assert main([*args, "--target", "us-west"]) == 2  # no such flow in the file

    csv = tmp_path / "offsets.csv"
    csv.write_text(out)
    _reset_from_file(dst, group, csv, kafka_versions["backup"])
    assert committed(dst, group) == {(f"us-east.{topic}", 0): 300, (f"us-east.{topic}", 1): 500}


def _reset_from_file(bootstrap: str, group: str, csv: Path, version: str) -> None:
    """Kafka's own kafka-consumer-groups --reset-offsets --from-file, of the target cluster's version."""
    tool, env = runtime(version, default_cache_dir()).tool("kafka-consumer-groups", csv.parent, heap="128m")
    command = [
        *tool,
        "--bootstrap-server",
        bootstrap,
        "--group",
        group,
        "--reset-offsets",
        "--from-file",
        str(csv),
        "--execute",
    ]
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
