"""LocalKafka: the set of local clusters recorded in one state directory."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localkafka.cluster import DEFAULT_BROKER_HEAP, ClusterSpec, LocalCluster, port_open
from localkafka.dist import KafkaRuntime, LocalKafkaError, check_version, default_version, runtime
from replication.mm2.policy import validate_alias

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


def default_cache_dir() -> Path:
    return Path(os.environ.get("MIRRORPLANE_CACHE_DIR", Path.home() / ".cache" / "mirrorplane"))


def parse_clusters(value: str, default: str | None = None) -> dict[str, str]:
    """`us-west,us-east` or `old:2.3.0,new:4.3.1`: alias -> Kafka version (default_version() where none is given)."""
    result: dict[str, str] = {}
    for item in (part.strip() for part in value.split(",")):
        if not item:
            continue
        alias, _, version = item.partition(":")
        result[alias.strip()] = check_version(version.strip() or default or default_version())
    return result


class LocalKafka:
    """Starts, tracks and stops local clusters; their PIDs, ports and versions live in `<state_dir>/state.json`.

    zk_port_base is the first control port: ZooKeeper's on 2.3.0, the KRaft controller's on 3.x/4.x."""

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
        return clusters

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

    def _cluster(self, entry: dict[str, Any]) -> LocalCluster:
        # A state file written before versions were recorded holds 2.3.0 clusters.
        version = entry.get("version", "2.3.0")
        spec = ClusterSpec(entry["alias"], entry["broker_port"], entry["zk_port"], Path(entry["data_dir"]))
        return LocalCluster(spec, self.runtime(version))

    def _entry(self, alias: str, index: int, version: str) -> dict[str, Any]:
        return {
            "alias": alias,
            "version": version,
            "broker_port": self.broker_port_base + index,
            "zk_port": self.zk_port_base + index,
            "data_dir": str(self.state_dir / alias),
            "zk_pid": None,
            "broker_pid": None,
        }

    def versions(self) -> dict[str, str]:
        """alias -> the Kafka version its cluster runs."""
        return {alias: e.get("version", "2.3.0") for alias, e in self._load().items()}

    def bootstraps(self) -> dict[str, str]:
        return {alias: f"127.0.0.1:{e['broker_port']}" for alias, e in self._load().items()}

    def cluster(self, alias: str) -> LocalCluster:
        """The process handle of one alias, for fault injection (kill, pause, restart the broker)."""
        return self._cluster(self._load()[alias])

    # -- commands ------------------------------------------------------------------------------------
    def up(self, aliases: Sequence[str] | dict[str, str], timeout: float = 120.0) -> dict[str, str]:
        """Start every alias not already running and block until each answers an admin call.

        aliases may map each alias to its Kafka version (`parse_clusters`); a plain list runs this manager's."""
        wanted = dict(aliases) if isinstance(aliases, dict) else dict.fromkeys(aliases, self.version)
        for alias in wanted:
            validate_alias(alias)
        state = self._load()
        deadline = time.monotonic() + timeout
        for alias, version in wanted.items():
            if alias not in state:
                state[alias] = self._entry(alias, len(state), version)
            elif state[alias].get("version", "2.3.0") != version:
                have = state[alias].get("version", "2.3.0")
                if self._running(state[alias]):
                    raise LocalKafkaError(
                        f"{alias}: runs Kafka {have}, not {version}; stop it first (python -m localkafka down)"
                    )
                # A stopped cluster of another version: its data directory cannot be read by this one.
                shutil.rmtree(state[alias]["data_dir"], ignore_errors=True)
                state[alias]["version"] = version
        todo = [self._cluster(state[a]) for a in wanted if not self._running(state[a])]
        for cluster in todo:
            self._check_ports_free(cluster)
            cluster.write_configs()
            if cluster.kraft:
                cluster.format_storage()
            else:
                state[cluster.spec.alias]["zk_pid"] = cluster.start_zookeeper()
        self._save(state)
        for cluster in todo:
            if not cluster.kraft:
                cluster.wait("zookeeper", state[cluster.spec.alias]["zk_pid"], deadline)
            state[cluster.spec.alias]["broker_pid"] = cluster.start_broker(self.broker_heap)
        self._save(state)
        for cluster in todo:
            self._broker_ready(cluster.spec.alias, deadline)
        return {alias: f"127.0.0.1:{state[alias]['broker_port']}" for alias in wanted}

    def restart_broker(self, alias: str, timeout: float = 120.0) -> None:
        """Start the broker of alias again (after a fault test killed it) and wait until it is ready."""
        self._broker_ready(alias, time.monotonic() + timeout)

    def _broker_ready(self, alias: str, deadline: float) -> None:
        """Wait until the broker of alias answers, starting it again while it exits during start-up.

        On 2.3.0, a broker killed with SIGKILL leaves its ZooKeeper session (and /brokers/ids/0) alive until the session
        times out, also across a ZooKeeper restart (`make demo` after a killed demo); a new broker exits while that
        node exists, so start-up is retried until the deadline.
        """
        while True:
            state = self._load()
            cluster = self._cluster(state[alias])
            if not cluster.owns(state[alias]["broker_pid"]):
                state[alias]["broker_pid"] = cluster.start_broker(self.broker_heap)
                self._save(state)
            try:
                cluster.wait("broker", state[alias]["broker_pid"], deadline)
                return
            except LocalKafkaError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(1.0)

    def broker_pid(self, alias: str) -> int:
        pid: int = self._load()[alias]["broker_pid"]
        return pid

    def down(self, purge: bool = False) -> None:
        """Stop exactly the processes recorded in the state file: brokers first, then ZooKeepers."""
        state = self._load()
        clusters = [self._cluster(entry) for entry in state.values()]
        for cluster in clusters:
            cluster.stop(state[cluster.spec.alias]["broker_pid"])
        for cluster in clusters:
            cluster.stop(state[cluster.spec.alias]["zk_pid"])
        for entry in state.values():
            entry["zk_pid"] = entry["broker_pid"] = None
        if purge:
            for entry in state.values():
                shutil.rmtree(entry["data_dir"], ignore_errors=True)
            self._state_file.unlink(missing_ok=True)
        elif state:
            self._save(state)

    def status(self) -> list[ClusterStatus]:
        result = []
        for alias, entry in self._load().items():
            cluster = self._cluster(entry)
            broker_running = cluster.owns(entry["broker_pid"])
            result.append(
                ClusterStatus(
                    alias=alias,
                    bootstrap=cluster.spec.bootstrap,
                    version=cluster.version,
                    kraft=cluster.kraft,
                    zookeeper_running=cluster.owns(entry["zk_pid"]),
                    broker_running=broker_running,
                    broker_ready=broker_running and cluster.broker_ready(),
                )
            )
        return result

    # -- helpers -------------------------------------------------------------------------------------
    def _running(self, entry: dict[str, Any]) -> bool:
        cluster = self._cluster(entry)
        return (cluster.kraft or cluster.owns(entry["zk_pid"])) and cluster.owns(entry["broker_pid"])

    def _check_ports_free(self, cluster: LocalCluster) -> None:
        for port in (cluster.spec.control_port, cluster.spec.broker_port):
            if port_open(port):
                raise LocalKafkaError(
                    f"{cluster.spec.alias}: port {port} is already in use by another process; "
                    "stop it or choose other ports with --port-base/--zk-port-base"
                )
