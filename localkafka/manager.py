"""LocalKafka: the set of local clusters recorded in one state directory."""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion

from localkafka.choices import ClusterChoice, choices_of, describe, parse_cluster_choices, parse_clusters
from localkafka.cluster import DEFAULT_BROKER_HEAP, ClusterSpec, LocalCluster, new_cluster_id, port_open
from localkafka.dist import (
    KafkaRuntime,
    LocalKafkaError,
    check_version,
    default_version,
    runtime,
)
from localkafka.security import ADMIN, PRINCIPALS, REPLICATOR, SCRAM_MECHANISM, Security, write_client_properties
from replication.mm2.policy import validate_alias

# The parsing of `--clusters` lives in localkafka.choices; these names stay importable from here.
__all__ = ["DEFAULT_ALIASES", "ClusterChoice", "ClusterStatus", "LocalKafka", "parse_cluster_choices", "parse_clusters"]
DEFAULT_ALIASES = ("us-west", "us-east", "backup")


@dataclass(frozen=True)
class ClusterStatus:
    """What `status` reports for one alias."""

    alias: str
    bootstrap: str
    version: str
    kraft: bool
    zookeeper_running: bool
    broker_running: bool
    broker_ready: bool
    security: Security = Security.PLAINTEXT
    brokers: int = 1
    brokers_running: int = 0


def default_cache_dir() -> Path:
    return Path(os.environ.get("MIRRORPLANE_CACHE_DIR", Path.home() / ".cache" / "mirrorplane"))


class LocalKafka:
    """Starts, tracks and stops local clusters; their PIDs, ports and versions live in `<state_dir>/state.json`.

    zk_port_base is the first control port: ZooKeeper's on 2.3.0, the KRaft controller's on 3.x/4.x. Each node takes
    the next free broker port and the control port as far from zk_port_base, so a cluster of three brokers takes
    three of each and the alias after it starts past them."""

    def __init__(
        self,
        state_dir: Path,
        broker_port_base: int = 19092,
        zk_port_base: int = 12181,
        cache_dir: Path | None = None,
        broker_heap: str = DEFAULT_BROKER_HEAP,
        version: str | None = None,
    ) -> None:
        self.state_dir = Path(state_dir).resolve()
        self.broker_heap = broker_heap
        self.broker_port_base = broker_port_base
        self.zk_port_base = zk_port_base
        self.cache_dir = cache_dir or default_cache_dir()
        self.version = check_version(version or default_version())
        self._state_file = self.state_dir / "state.json"
        self._runtimes: dict[str, KafkaRuntime] = {}

    # -- state ---------------------------------------------------------------------------------------
    def _load(self) -> dict[str, dict[str, Any]]:
        if not self._state_file.exists():
            return {}
        clusters: dict[str, dict[str, Any]] = json.loads(self._state_file.read_text())["clusters"]
        return {alias: _with_nodes(entry) for alias, entry in clusters.items()}

    def _save(self, clusters: dict[str, dict[str, Any]]) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        tmp = self._state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps({"clusters": clusters}, indent=2))
        tmp.replace(self._state_file)

    def runtime(self, version: str | None = None) -> KafkaRuntime:
        """The Java, classpath and mode of version (this manager's default version when None)."""
        version = version or self.version
        if version not in self._runtimes:
            self._runtimes[version] = runtime(version, self.cache_dir)
        return self._runtimes[version]

    def _nodes(self, entry: dict[str, Any]) -> list[LocalCluster]:
        """The process handles of every node of a cluster, in node id order."""
        # A state file written before versions were recorded holds 2.3.0 clusters.
        version = entry.get("version", "2.3.0")
        security = Security(entry.get("security", Security.PLAINTEXT))
        nodes = entry["nodes"]
        quorum = tuple((n["node_id"], n["broker_port"], n["control_port"]) for n in nodes) if len(nodes) > 1 else ()
        home = Path(entry["data_dir"])
        return [
            LocalCluster(
                ClusterSpec(
                    entry["alias"],
                    n["broker_port"],
                    n["control_port"],
                    Path(n["data_dir"]),
                    security,
                    node_id=n["node_id"],
                    quorum=quorum,
                    home=home,
                ),
                self.runtime(version),
            )
            for n in nodes
        ]

    def _cluster(self, entry: dict[str, Any]) -> LocalCluster:
        return self._nodes(entry)[0]

    def _entry(self, alias: str, slot: int, choice: ClusterChoice) -> dict[str, Any]:
        home = self.state_dir / alias
        single = choice.brokers == 1  # one node keeps the alias's directory, as before clusters had several
        nodes = [
            {
                "node_id": k + 1,
                "broker_port": self.broker_port_base + slot + k,
                "control_port": self.zk_port_base + slot + k,
                "data_dir": str(home if single else home / f"node-{k + 1}"),
                "broker_pid": None,
            }
            for k in range(choice.brokers)
        ]
        return {
            "alias": alias,
            "version": choice.version,
            "security": str(choice.security),
            "data_dir": str(home),
            "zk_pid": None,
            "nodes": nodes,
        }

    def _next_slot(self, state: dict[str, dict[str, Any]], other_than: str) -> int:
        """The first port offset past every node of the other aliases."""
        used = [
            n["broker_port"] - self.broker_port_base for a, e in state.items() if a != other_than for n in e["nodes"]
        ]
        return max(used, default=-1) + 1

    def versions(self) -> dict[str, str]:
        """alias -> the Kafka version its cluster runs."""
        return {alias: e.get("version", "2.3.0") for alias, e in self._load().items()}

    def bootstraps(self) -> dict[str, str]:
        """alias -> every broker's host:port, comma-separated."""
        return {alias: self._cluster(e).spec.bootstrap for alias, e in self._load().items()}

    def securities(self) -> dict[str, Security]:
        """alias -> how its clients connect."""
        return {alias: Security(e.get("security", Security.PLAINTEXT)) for alias, e in self._load().items()}

    def client_config(self, alias: str, principal: str = ADMIN) -> dict[str, str]:
        """librdkafka settings of a client of alias: on a secured cluster, as `admin` (a super user) or as
        `replicator` (no ACL until one is granted)."""
        return self.cluster(alias).spec.client_config(principal)

    def client_properties(self, alias: str) -> dict[str, Path]:
        """principal -> the client properties file `up` wrote for a secured alias (none for a PLAINTEXT one)."""
        spec = self.cluster(alias).spec
        if spec.security is Security.PLAINTEXT:
            return {}
        return {principal: spec.root / f"client-{principal}.properties" for principal in PRINCIPALS}

    def cluster(self, alias: str, node_id: int | None = None) -> LocalCluster:
        """The process handle of one node of alias (its first when None), for fault injection; its spec names the
        whole cluster's bootstrap and security material."""
        nodes = self._nodes(self._load()[alias])
        if node_id is None:
            return nodes[0]
        return next(n for n in nodes if n.spec.node_id == node_id)

    def node_ids(self, alias: str) -> list[int]:
        return [int(n["node_id"]) for n in self._load()[alias]["nodes"]]

    # -- commands ------------------------------------------------------------------------------------
    def up(
        self, aliases: Sequence[str] | Mapping[str, str] | Mapping[str, ClusterChoice], timeout: float = 120.0
    ) -> dict[str, str]:
        """Start every node not already running and block until each answers an admin call that sees all its
        cluster's brokers.

        aliases may map each alias to its Kafka version (`parse_clusters`) or to a ClusterChoice (version, security
        and brokers, `parse_cluster_choices`); a plain list runs this manager's version on PLAINTEXT, one broker."""
        choices = choices_of(aliases, self.version)
        for alias in choices:
            validate_alias(alias)
        state = self._load()
        deadline = time.monotonic() + timeout
        for alias, choice in choices.items():
            self._reconcile(state, alias, choice)
        self._save(state)
        todo = [alias for alias in choices if not self._running(state[alias])]
        for alias in todo:
            self._prepare(state[alias])
        self._save(state)
        for alias in todo:
            first = self._cluster(state[alias])
            if not first.kraft:
                first.wait("zookeeper", state[alias]["zk_pid"], deadline)
            self._start_stopped(state[alias])
        self._save(state)
        for alias in todo:
            self._broker_ready(alias, deadline)
        for alias in choices:
            self._secure_clients(self.cluster(alias), deadline)
        return {alias: self._cluster(state[alias]).spec.bootstrap for alias in choices}

    def _reconcile(self, state: dict[str, dict[str, Any]], alias: str, choice: ClusterChoice) -> None:
        """Record alias as choice asks: a new entry, or a stopped one of another version, security or number of
        brokers made anew (its data cannot be read by the other; its metadata names other listeners or voters)."""
        entry = state.get(alias)
        if entry is None:
            state[alias] = self._entry(alias, self._next_slot(state, alias), choice)
            return
        have = ClusterChoice(
            entry.get("version", "2.3.0"), Security(entry.get("security", Security.PLAINTEXT)), len(entry["nodes"])
        )
        if have == choice:
            return
        if self._running(entry):
            raise LocalKafkaError(
                f"{alias}: runs {describe(have)}, not {describe(choice)}; stop it first (python -m localkafka down)"
            )
        shutil.rmtree(entry["data_dir"], ignore_errors=True)
        slot = entry["nodes"][0]["broker_port"] - self.broker_port_base
        if have.brokers != choice.brokers:
            slot = self._next_slot(state, alias)
        state[alias] = self._entry(alias, slot, choice)

    def _prepare(self, entry: dict[str, Any]) -> None:
        """Configure and format the stopped nodes of a cluster (one cluster id for all), and start its ZooKeeper."""
        nodes = [n for n in self._nodes(entry) if not n.owns(_record(entry, n.spec.node_id)["broker_pid"])]
        for node in nodes:
            self._check_ports_free(node)
        cluster_id = _formatted_cluster_id(self._nodes(entry)) or new_cluster_id()
        for node in nodes:
            node.write_configs()
        # Each format is a JVM of its own (10-15 s on a busy machine): the nodes are formatted side by side.
        with ThreadPoolExecutor(max(len(nodes), 1)) as pool:
            list(pool.map(lambda node: node.format_storage(cluster_id), [n for n in nodes if n.kraft]))
        first = self._cluster(entry)
        if not first.kraft and not first.owns(entry["zk_pid"]):
            entry["zk_pid"] = first.start_zookeeper()

    def _start_stopped(self, entry: dict[str, Any], node_ids: set[int] | None = None) -> bool:
        started = False
        for node in self._nodes(entry):
            record = _record(entry, node.spec.node_id)
            if (node_ids is None or node.spec.node_id in node_ids) and not node.owns(record["broker_pid"]):
                record["broker_pid"] = node.start_broker(self.broker_heap)
                started = True
        return started

    def _secure_clients(self, cluster: LocalCluster, deadline: float) -> None:
        """On a secured cluster: the replicator's SCRAM credential (Kafka's admin API; the admin's was formatted
        into the metadata log), and a client properties file per principal."""
        spec = cluster.spec
        if spec.security is Security.PLAINTEXT:
            return
        if spec.security is Security.SCRAM:
            _upsert_scram_user(spec.client_config(ADMIN), REPLICATOR, spec.material.password(REPLICATOR), deadline)
        for principal, path in self.client_properties(spec.alias).items():
            write_client_properties(path, spec.client_config(principal))

    def restart_broker(self, alias: str, timeout: float = 120.0, node_id: int | None = None) -> None:
        """Start the brokers of alias again (after a fault test killed one), or only node_id, and wait until each
        is ready: it answers an admin call that sees every broker of its cluster."""
        self._broker_ready(alias, time.monotonic() + timeout, None if node_id is None else {node_id})

    def start_broker(self, alias: str, node_id: int, timeout: float = 120.0) -> None:
        """Start one stopped node of alias and wait until it is ready."""
        self.restart_broker(alias, timeout, node_id)

    def kill_broker(self, alias: str, node_id: int, sig: int = signal.SIGKILL) -> None:
        """Send sig (SIGKILL: a crash) to one node of alias, if it is still the JVM started for it."""
        node = self.cluster(alias, node_id)
        pid = self.broker_pid(alias, node_id)
        if node.owns(pid):
            os.kill(pid, sig)

    def stop_broker(self, alias: str, node_id: int, timeout: float = 60.0) -> None:
        """Stop one node of alias cleanly (SIGTERM: a controlled shutdown moves its leaderships away first)."""
        state = self._load()
        node = self.cluster(alias, node_id)
        node.stop(_record(state[alias], node_id)["broker_pid"], timeout)
        _record(state[alias], node_id)["broker_pid"] = None
        self._save(state)

    def _broker_ready(self, alias: str, deadline: float, node_ids: set[int] | None = None) -> None:
        """Wait until the nodes of alias (or those of node_ids) answer, starting each again while it exits during
        start-up. Every node to start is started before the first wait: one of several nodes is ready only once
        its controller quorum has a majority and the other brokers registered.

        On 2.3.0, a broker killed with SIGKILL leaves its ZooKeeper session (and /brokers/ids/0) alive until the session
        times out, also across a ZooKeeper restart (`make demo` after a killed demo); a new broker exits while that
        node exists, so start-up is retried until the deadline.
        """
        while True:
            state = self._load()
            if self._start_stopped(state[alias], node_ids):
                self._save(state)
            try:
                for node in self._nodes(state[alias]):
                    if node_ids is None or node.spec.node_id in node_ids:
                        node.wait("broker", _record(state[alias], node.spec.node_id)["broker_pid"], deadline)
                return
            except LocalKafkaError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(1.0)

    def broker_pid(self, alias: str, node_id: int | None = None) -> int:
        """The PID of one node of alias (its first when None)."""
        entry = self._load()[alias]
        pid: int = _record(entry, node_id or entry["nodes"][0]["node_id"])["broker_pid"]
        return pid

    def broker_pids(self, alias: str) -> dict[int, int | None]:
        """node id -> the PID of its broker (None when stopped)."""
        return {n["node_id"]: n["broker_pid"] for n in self._load()[alias]["nodes"]}

    def down(self, purge: bool = False) -> None:
        """Stop exactly the processes recorded in the state file: brokers first (all signalled at once, so the
        last nodes of a quorum are not left waiting for a controller), then ZooKeepers."""
        state = self._load()
        brokers = [
            (node, _record(e, node.spec.node_id)["broker_pid"]) for e in state.values() for node in self._nodes(e)
        ]
        for node, pid in brokers:
            if node.owns(pid):
                os.kill(pid, signal.SIGTERM)
        for node, pid in brokers:
            node.stop(pid)
        for entry in state.values():
            self._cluster(entry).stop(entry["zk_pid"])
            entry["zk_pid"] = None
            for record in entry["nodes"]:
                record["broker_pid"] = None
        if purge:
            for entry in state.values():
                shutil.rmtree(entry["data_dir"], ignore_errors=True)
            self._state_file.unlink(missing_ok=True)
        elif state:
            self._save(state)

    def status(self) -> list[ClusterStatus]:
        result = []
        for alias, entry in self._load().items():
            nodes = self._nodes(entry)
            running = [n for n in nodes if n.owns(_record(entry, n.spec.node_id)["broker_pid"])]
            first = nodes[0]
            result.append(
                ClusterStatus(
                    alias=alias,
                    bootstrap=first.spec.bootstrap,
                    version=first.version,
                    kraft=first.kraft,
                    zookeeper_running=first.owns(entry["zk_pid"]),
                    broker_running=len(running) == len(nodes),
                    broker_ready=len(running) == len(nodes) and all(n.broker_ready() for n in nodes),
                    security=first.spec.security,
                    brokers=len(nodes),
                    brokers_running=len(running),
                )
            )
        return result

    # -- helpers -------------------------------------------------------------------------------------
    def _running(self, entry: dict[str, Any]) -> bool:
        nodes = self._nodes(entry)
        zookeeper = nodes[0].kraft or nodes[0].owns(entry["zk_pid"])
        return zookeeper and all(n.owns(_record(entry, n.spec.node_id)["broker_pid"]) for n in nodes)

    def _check_ports_free(self, cluster: LocalCluster) -> None:
        for port in (cluster.spec.control_port, cluster.spec.broker_port):
            if port_open(port):
                raise LocalKafkaError(
                    f"{cluster.spec.alias}: port {port} is already in use by another process; "
                    "stop it or choose other ports with --port-base/--zk-port-base"
                )


def _with_nodes(entry: dict[str, Any]) -> dict[str, Any]:
    """An entry of a state file written before clusters had several nodes, with its one node listed."""
    if "nodes" in entry:
        return entry
    node = {
        "node_id": 1,
        "broker_port": entry["broker_port"],
        "control_port": entry["zk_port"],
        "data_dir": entry["data_dir"],
        "broker_pid": entry.get("broker_pid"),
    }
    rest = {k: v for k, v in entry.items() if k not in ("broker_port", "zk_port", "broker_pid")}
    return {**rest, "nodes": [node]}


def _record(entry: dict[str, Any], node_id: int) -> dict[str, Any]:
    for record in entry["nodes"]:
        if record["node_id"] == node_id:
            found: dict[str, Any] = record
            return found
    raise LocalKafkaError(f"{entry['alias']}: no node {node_id} (nodes: {[n['node_id'] for n in entry['nodes']]})")


def _formatted_cluster_id(nodes: Sequence[LocalCluster]) -> str | None:
    """The cluster id a formatted node of the cluster holds, so that a node formatted later joins the same cluster."""
    for node in nodes:
        meta = node.spec.data_dir / "kafka-logs" / "meta.properties"
        if meta.exists():
            for line in meta.read_text().splitlines():
                if line.startswith("cluster.id="):
                    return line.split("=", 1)[1].strip()
    return None


def _upsert_scram_user(admin_config: dict[str, str], user: str, password: str, deadline: float) -> None:
    """Create (or reset) user's SCRAM-SHA-512 credential with Kafka's admin API, retried to the deadline: a broker
    that just answered its first metadata call may not have its SCRAM cache ready yet."""
    assert SCRAM_MECHANISM == "SCRAM-SHA-512"
    upsert = UserScramCredentialUpsertion(
        user, ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192), password.encode()
    )
    admin = AdminClient(dict[str, str | int | float | bool](admin_config))
    while True:
        try:
            admin.alter_user_scram_credentials([upsert])[user].result(timeout=10)
            return
        except KafkaException as exc:
            if time.monotonic() > deadline:
                raise LocalKafkaError(f"creating the SCRAM user {user} failed: {exc}") from exc
            time.sleep(0.5)
