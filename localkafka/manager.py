"""LocalKafka: the set of local clusters recorded in one state directory."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion

from localkafka.cluster import DEFAULT_BROKER_HEAP, ClusterSpec, LocalCluster, port_open
from localkafka.dist import KafkaRuntime, LocalKafkaError, check_version, default_version, runtime
from localkafka.security import ADMIN, PRINCIPALS, REPLICATOR, SCRAM_MECHANISM, Security, write_client_properties
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
    security: Security = Security.PLAINTEXT


def default_cache_dir() -> Path:
    return Path(os.environ.get("MIRRORPLANE_CACHE_DIR", Path.home() / ".cache" / "mirrorplane"))


@dataclass(frozen=True)
class ClusterChoice:
    """What `--clusters` asks of one alias: its Kafka version and how its clients connect."""

    version: str
    security: Security = Security.PLAINTEXT


def parse_cluster_choices(value: str, default: str | None = None) -> dict[str, ClusterChoice]:
    """`us-west,us-east`, `old:2.3.0,new:4.3.1` or `src:scram,dst:mtls:4.3.1,plain`: alias -> its version
    (default_version() where none is given) and security (`scram`, `mtls` or `plaintext`, the default)."""
    result: dict[str, ClusterChoice] = {}
    for item in (part.strip() for part in value.split(",")):
        if not item:
            continue
        alias, *options = (part.strip() for part in item.split(":"))
        version, security = "", Security.PLAINTEXT
        for option in options:
            if option in set(Security):
                security = Security(option)
            elif option[:1].isdigit() and not version:
                version = option
            else:
                kinds = ", ".join(kind.value for kind in Security)
                raise LocalKafkaError(f"{item}: {option!r} is neither a Kafka version nor a security kind ({kinds})")
        result[alias] = ClusterChoice(check_version(version or default or default_version()), security)
    return result


def parse_clusters(value: str, default: str | None = None) -> dict[str, str]:
    """`us-west,us-east` or `old:2.3.0,new:4.3.1`: alias -> Kafka version (default_version() where none is given)."""
    return {alias: choice.version for alias, choice in parse_cluster_choices(value, default).items()}


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
        security = Security(entry.get("security", Security.PLAINTEXT))
        spec = ClusterSpec(entry["alias"], entry["broker_port"], entry["zk_port"], Path(entry["data_dir"]), security)
        return LocalCluster(spec, self.runtime(version))

    def _entry(self, alias: str, index: int, version: str, security: Security) -> dict[str, Any]:
        return {
            "alias": alias,
            "version": version,
            "security": str(security),
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
        return {principal: spec.data_dir / f"client-{principal}.properties" for principal in PRINCIPALS}

    def cluster(self, alias: str) -> LocalCluster:
        """The process handle of one alias, for fault injection (kill, pause, restart the broker)."""
        return self._cluster(self._load()[alias])

    # -- commands ------------------------------------------------------------------------------------
    def up(
        self, aliases: Sequence[str] | Mapping[str, str] | Mapping[str, ClusterChoice], timeout: float = 120.0
    ) -> dict[str, str]:
        """Start every alias not already running and block until each answers an admin call.

        aliases may map each alias to its Kafka version (`parse_clusters`) or to a ClusterChoice (version and
        security, `parse_cluster_choices`); a plain list runs this manager's version on PLAINTEXT."""
        choices = _choices(aliases, self.version)
        wanted = {alias: choice.version for alias, choice in choices.items()}
        for alias in wanted:
            validate_alias(alias)
        state = self._load()
        deadline = time.monotonic() + timeout
        for alias, version in wanted.items():
            security = choices[alias].security
            if alias in state and state[alias].get("security", Security.PLAINTEXT) != security:
                have = state[alias].get("security", Security.PLAINTEXT)
                if self._running(state[alias]):
                    raise LocalKafkaError(
                        f"{alias}: runs on {have}, not {security}; stop it first (python -m localkafka down)"
                    )
                shutil.rmtree(state[alias]["data_dir"], ignore_errors=True)  # its metadata names other listeners
                state[alias]["security"] = str(security)
            if alias not in state:
                state[alias] = self._entry(alias, len(state), version, security)
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
        for alias in wanted:
            self._secure_clients(self.cluster(alias), deadline)
        return {alias: f"127.0.0.1:{state[alias]['broker_port']}" for alias in wanted}

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
                    security=cluster.spec.security,
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


def _choices(
    aliases: Sequence[str] | Mapping[str, str] | Mapping[str, ClusterChoice], version: str
) -> dict[str, ClusterChoice]:
    if not isinstance(aliases, Mapping):
        return {alias: ClusterChoice(version) for alias in aliases}
    return {
        alias: choice if isinstance(choice, ClusterChoice) else ClusterChoice(choice)
        for alias, choice in aliases.items()
    }


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
