"""Clusters of several brokers in localkafka, without starting Kafka: the `--clusters` option, the ports each node
gets, the broker settings it writes, and the state file of a single broker read as one node."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from localkafka import LocalKafka, LocalKafkaError
from localkafka.choices import ClusterChoice, parse_cluster_choices
from localkafka.cluster import ClusterSpec, LocalCluster, pid_owned
from localkafka.dist import KafkaRuntime
from localkafka.security import Security
from tests.support.kafka import wait_until

KRAFT = KafkaRuntime("4.3.1", "java", "", kraft=True)


def test_the_brokers_option_sets_the_number_of_brokers_beside_version_and_security() -> None:
    choices = parse_cluster_choices("src:3brokers,dst:3brokers:scram:4.3.1,plain", "4.3.1")
    assert choices == {
        "src": ClusterChoice("4.3.1", Security.PLAINTEXT, 3),
        "dst": ClusterChoice("4.3.1", Security.SCRAM, 3),
        "plain": ClusterChoice("4.3.1", Security.PLAINTEXT, 1),
    }


@pytest.mark.parametrize(
    ("value", "message"),
    [("old:2.3.0:3brokers", "one broker per cluster"), ("src:0brokers", "1 to 9"), ("src:12brokers", "1 to 9")],
)
def test_a_number_of_brokers_the_cluster_cannot_have_is_refused(value: str, message: str) -> None:
    with pytest.raises(LocalKafkaError, match=message):
        parse_cluster_choices(value, "4.3.1")


def _entries(tmp_path: Path, choices: dict[str, ClusterChoice]) -> dict[str, dict[str, object]]:
    kafka = LocalKafka(tmp_path, broker_port_base=36092, zk_port_base=36181, version="4.3.1")
    state: dict[str, dict[str, object]] = {}
    for alias, choice in choices.items():
        kafka._reconcile(state, alias, choice)  # type: ignore[arg-type]
    return state


def test_each_node_gets_ports_of_its_own_and_the_next_alias_starts_past_them(tmp_path: Path) -> None:
    state = _entries(
        tmp_path,
        {
            "src": ClusterChoice("4.3.1", brokers=3),
            "one": ClusterChoice("4.3.1"),
            "dst": ClusterChoice("4.3.1", brokers=3),
        },
    )
    ports = {alias: [(n["broker_port"], n["control_port"]) for n in e["nodes"]] for alias, e in state.items()}  # type: ignore[attr-defined]
    assert ports == {
        "src": [(36092, 36181), (36093, 36182), (36094, 36183)],
        "one": [(36095, 36184)],
        "dst": [(36096, 36185), (36097, 36186), (36098, 36187)],
    }
    assert [n["data_dir"] for n in state["src"]["nodes"]] == [str(tmp_path / "src" / f"node-{k}") for k in (1, 2, 3)]  # type: ignore[index]
    assert state["one"]["nodes"][0]["data_dir"] == str(tmp_path / "one")  # type: ignore[index]


def test_bootstraps_name_every_broker_and_an_old_state_file_reads_as_one_node(tmp_path: Path) -> None:
    kafka = LocalKafka(tmp_path, broker_port_base=36092, zk_port_base=36181, version="4.3.1")
    old = {
        "alias": "old",
        "version": "4.3.1",
        "broker_port": 36099,
        "zk_port": 36188,
        "data_dir": str(tmp_path / "old"),
    }
    state = _entries(tmp_path, {"src": ClusterChoice("4.3.1", brokers=3)})
    (tmp_path / "state.json").write_text(
        json.dumps({"clusters": {**state, "old": {**old, "zk_pid": None, "broker_pid": None}}})
    )
    kafka._runtimes["4.3.1"] = KRAFT
    assert kafka.bootstraps() == {"src": "127.0.0.1:36092,127.0.0.1:36093,127.0.0.1:36094", "old": "127.0.0.1:36099"}
    assert kafka.node_ids("src") == [1, 2, 3] and kafka.node_ids("old") == [1]
    assert kafka.broker_pids("src") == {1: None, 2: None, 3: None}
    assert [s.brokers for s in kafka.status()] == [3, 1]


def test_each_node_is_a_voter_of_one_quorum_and_topics_are_kept_at_three_replicas(tmp_path: Path) -> None:
    quorum = ((1, 36092, 36181), (2, 36093, 36182), (3, 36094, 36183))
    spec = ClusterSpec("src", 36093, 36182, tmp_path / "node-2", node_id=2, quorum=quorum, home=tmp_path)
    LocalCluster(spec, KRAFT).write_configs()
    lines = (tmp_path / "node-2" / "server.properties").read_text().splitlines()
    settings = dict(line.split("=", 1) for line in lines)
    assert settings["node.id"] == "2"
    assert settings["controller.quorum.voters"] == "1@127.0.0.1:36181,2@127.0.0.1:36182,3@127.0.0.1:36183"
    assert settings["listeners"] == "PLAINTEXT://127.0.0.1:36093,CONTROLLER://127.0.0.1:36182"
    for key in (
        "default.replication.factor",
        "offsets.topic.replication.factor",
        "transaction.state.log.replication.factor",
    ):
        assert settings[key] == "3", key
    assert settings["min.insync.replicas"] == settings["transaction.state.log.min.isr"] == "2"
    assert spec.material.directory == tmp_path / "tls", "the nodes share one CA and one set of client credentials"


def test_a_single_broker_keeps_replication_factor_one(tmp_path: Path) -> None:
    LocalCluster(ClusterSpec("one", 36092, 36181, tmp_path), KRAFT).write_configs()
    settings = dict(line.split("=", 1) for line in (tmp_path / "server.properties").read_text().splitlines())
    assert settings["default.replication.factor"] == "1" and settings["controller.quorum.voters"] == "1@127.0.0.1:36181"
    assert "min.insync.replicas" not in settings


def test_the_jvm_of_node_10_is_not_taken_for_that_of_node_1(tmp_path: Path) -> None:
    marker = tmp_path / "node-10"
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", f"{marker}{os.sep}server.properties"])
    try:
        wait_until(lambda: pid_owned(proc.pid, marker), what="the child's own command line")  # after its exec
        assert not pid_owned(proc.pid, tmp_path / "node-1")
    finally:
        proc.kill()
        proc.wait()


def test_the_nodes_of_a_secured_cluster_talk_over_its_listener_with_one_shared_ca(tmp_path: Path) -> None:
    quorum = ((1, 36092, 36181), (2, 36093, 36182), (3, 36094, 36183))
    for node, broker, control in quorum:
        spec = ClusterSpec(
            "sec",
            broker,
            control,
            tmp_path / f"node-{node}",
            Security.SCRAM,
            node_id=node,
            quorum=quorum,
            home=tmp_path,
        )
        LocalCluster(spec, KRAFT).write_configs()
    settings = [
        dict(line.split("=", 1) for line in (tmp_path / f"node-{n}" / "server.properties").read_text().splitlines())
        for n in (1, 2, 3)
    ]
    assert [s["listeners"] for s in settings] == [
        f"SASL_SSL://127.0.0.1:{broker},CONTROLLER://127.0.0.1:{control}" for _, broker, control in quorum
    ]
    assert {s["inter.broker.listener.name"] for s in settings} == {"SASL_SSL"}
    assert {s["ssl.truststore.location"] for s in settings} == {str(tmp_path / "tls" / "ca.pem")}
    assert len({s["controller.quorum.voters"] for s in settings}) == 1
