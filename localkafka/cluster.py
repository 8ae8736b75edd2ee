"""One node of a local Kafka cluster, started and stopped by PID: on 4.x (and 3.x) a KRaft process in combined mode,
broker and controller together (one per cluster, or several that form one controller quorum); on 2.3.0 a ZooKeeper and
a broker, two JVMs."""

from __future__ import annotations

import base64
import contextlib
import logging
import os
import re
import signal
import socket
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from confluent_kafka.admin import AdminClient

from localkafka.dist import KafkaRuntime, LocalKafkaError
from localkafka.security import (
    ADMIN,
    Material,
    Security,
    broker_settings,
    client_config,
    format_arguments,
    make_material,
)

_quiet = logging.getLogger("localkafka.probe")
_quiet.addHandler(logging.NullHandler())
_quiet.propagate = False
# A partition's log directory: `<topic>-<partition>` (one being deleted ends in `-delete`).
_PARTITION_DIR = re.compile(r"^(.+)-\d+$")

# KRaft's own metadata log lives beside the partitions' directories and is never listed as a topic.
METADATA_LOG_DIR = "__cluster_metadata"

BROKER_SETTINGS = {
    # Single-broker clusters for tests and demos: internal topics at replication factor 1.
    "num.partitions": "1",
    "default.replication.factor": "1",
    "offsets.topic.replication.factor": "1",
    "offsets.topic.num.partitions": "8",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "transaction.state.log.num.partitions": "8",
    "auto.create.topics.enable": "false",
    "delete.topic.enable": "true",
    "group.initial.rebalance.delay.ms": "0",
    # ACLs are stored and synced, but nothing is denied when no ACL matches.
    "allow.everyone.if.no.acl.found": "true",
    "super.users": "User:ANONYMOUS",
    "log.cleaner.backoff.ms": "1000",
    "num.network.threads": "2",
    "num.io.threads": "4",
}
ZOOKEEPER_BROKER_SETTINGS = {
    "authorizer.class.name": "kafka.security.auth.SimpleAclAuthorizer",
    "zookeeper.connection.timeout.ms": "30000",
}
KRAFT_BROKER_SETTINGS = {
    "process.roles": "broker,controller",
    "node.id": "1",
    "controller.listener.names": "CONTROLLER",
    "inter.broker.listener.name": "PLAINTEXT",
    "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
    "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    # The share-group state topic (Kafka 4.1+) and the transaction log, at one replica like the others.
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
}


def replicated_settings(brokers: int) -> dict[str, str]:
    """A cluster of several brokers keeps topics and internal topics at replication factor min(brokers, 3) with one
    replica fewer in sync required, so that one broker down loses nothing acknowledged and refuses no write."""
    factor = str(min(brokers, 3))
    in_sync = str(max(min(brokers, 3) - 1, 1))
    return {
        "default.replication.factor": factor,
        "min.insync.replicas": in_sync,
        "offsets.topic.replication.factor": factor,
        "transaction.state.log.replication.factor": factor,
        "transaction.state.log.min.isr": in_sync,
        "share.coordinator.state.topic.replication.factor": factor,
        "share.coordinator.state.topic.min.isr": in_sync,
    }


# Enough for the demo and the tests; a broker holding 10,000 partitions needs more (bench/clusters.py).
DEFAULT_BROKER_HEAP = "512m"
JVM_OPTS = ["-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20", "-Djava.awt.headless=true"]


@dataclass(frozen=True)
class ClusterSpec:
    """Where one node of a local cluster lives: its alias, ports and data directory, and its cluster's other nodes.

    control_port is ZooKeeper's client port on 2.3.0 and the KRaft controller's listener on 3.x/4.x. quorum holds
    every node of the cluster as (node id, broker port, control port); empty for a cluster of this node alone. home
    is the cluster's own directory, shared by its nodes (TLS material, client properties); data_dir when None."""

    alias: str
    broker_port: int
    control_port: int
    data_dir: Path
    security: Security = Security.PLAINTEXT
    node_id: int = 1
    quorum: tuple[tuple[int, int, int], ...] = ()
    home: Path | None = None

    @property
    def brokers(self) -> int:
        return len(self.quorum) or 1

    @property
    def bootstrap(self) -> str:
        """Every broker of the cluster, comma-separated."""
        ports = [broker for _, broker, _ in self.quorum] or [self.broker_port]
        return ",".join(f"127.0.0.1:{port}" for port in ports)

    @property
    def root(self) -> Path:
        return self.home or self.data_dir

    @property
    def material(self) -> Material:
        """The keys, certificates and passwords of a secured cluster (security.py), one set for all its nodes."""
        return Material(self.root / "tls")

    def client_config(self, principal: str = ADMIN) -> dict[str, str]:
        """librdkafka settings of a client of this cluster, connecting as principal on a secured one."""
        return client_config(self.security, self.material, self.bootstrap, principal)


def port_open(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def pid_alive(pid: int | None) -> bool:
    """True if pid exists and is not a zombie (right after fork its cmdline is still the parent's)."""
    if not pid:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def pid_owned(pid: int | None, marker: Path) -> bool:
    """True if pid is alive and is the JVM we started for this data dir (guards against PID reuse). The marker ends
    in a separator, so that the JVM of `src2` (or of `node-10`) is not taken for that of `src` (`node-1`)."""
    if not pid:
        return False
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return False
    return f"{marker}{os.sep}" in cmdline


class LocalCluster:
    """Starts, probes and stops the JVMs of one node of a local cluster (one on KRaft, two with ZooKeeper)."""

    def __init__(self, spec: ClusterSpec, kafka: KafkaRuntime) -> None:
        self.spec = spec
        self.kafka = kafka

    @property
    def version(self) -> str:
        return self.kafka.version

    @property
    def kraft(self) -> bool:
        return self.kafka.kraft

    # -- configuration -------------------------------------------------------------------------------
    def write_configs(self) -> None:
        data = self.spec.data_dir
        for sub in ("kafka-logs", "logs") if self.kraft else ("zookeeper", "kafka-logs", "logs"):
            (data / sub).mkdir(parents=True, exist_ok=True)
        plain = f"PLAINTEXT://127.0.0.1:{self.spec.broker_port}"
        broker = {"log.dirs": str(data / "kafka-logs"), **BROKER_SETTINGS}
        if self.spec.security is not Security.PLAINTEXT and not self.kraft:
            raise LocalKafkaError(f"{self.spec.alias}: a {self.spec.security} cluster needs Kafka 3.x or 4.x (KRaft)")
        if self.spec.brokers > 1 and not self.kraft:
            raise LocalKafkaError(f"{self.spec.alias}: a cluster of several brokers needs Kafka 3.x or 4.x (KRaft)")
        if self.kraft:
            voters = self.spec.quorum or ((self.spec.node_id, self.spec.broker_port, self.spec.control_port),)
            broker |= {
                **KRAFT_BROKER_SETTINGS,
                "node.id": str(self.spec.node_id),
                "listeners": f"{plain},CONTROLLER://127.0.0.1:{self.spec.control_port}",
                "advertised.listeners": plain,
                "controller.quorum.voters": ",".join(f"{node}@127.0.0.1:{port}" for node, _, port in voters),
            }
            if self.spec.brokers > 1:
                broker |= replicated_settings(self.spec.brokers)
            if self.spec.security is not Security.PLAINTEXT:
                material = make_material(self.spec.material.directory, self.spec.alias)
                secured = broker_settings(self.spec.security, material, self.spec.broker_port, self.spec.control_port)
                broker |= secured
        else:
            zk = {
                "dataDir": str(data / "zookeeper"),
                "clientPort": str(self.spec.control_port),
                "clientPortAddress": "127.0.0.1",
                "maxClientCnxns": "0",
                "admin.enableServer": "false",
                "4lw.commands.whitelist": "*",
            }
            _write_properties(data / "zookeeper.properties", zk)
            broker |= {
                **ZOOKEEPER_BROKER_SETTINGS,
                "broker.id": "0",
                "listeners": plain,
                "advertised.listeners": plain,
                "zookeeper.connect": f"127.0.0.1:{self.spec.control_port}",
            }
        _write_properties(data / "server.properties", broker)

    def format_storage(self, cluster_id: str | None = None) -> None:
        """KRaft: write the metadata log's meta.properties once (`kafka-storage format`); a formatted directory is
        kept as it is, so a cluster started again finds its topics. The nodes of one cluster share its cluster_id."""
        data = self.spec.data_dir
        if not self.kraft or (data / "kafka-logs" / "meta.properties").exists():
            return
        cmd = [
            self.kafka.java,
            *self.kafka.log_options(data / "logs", tools=True),
            "-cp",
            self.kafka.classpath,
            "kafka.tools.StorageTool",
            "format",
            "--cluster-id",
            cluster_id or new_cluster_id(),
            "--config",
            str(data / "server.properties"),
            "--ignore-formatted",
            *format_arguments(self.spec.security, self.spec.material),
        ]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=120)
        if done.returncode != 0:
            raise LocalKafkaError(
                f"{self.spec.alias}: formatting the KRaft storage failed:\n{(done.stdout + done.stderr)[-2000:]}"
            )

    # -- processes -----------------------------------------------------------------------------------
    def _spawn(self, main_class: str, config: str, heap: str, log_name: str) -> int:
        data = self.spec.data_dir
        cmd = [
            self.kafka.java,
            f"-Xmx{heap}",
            f"-Xms{heap}",
            *JVM_OPTS,
            *self.kafka.log_options(data / "logs"),
            "-cp",
            self.kafka.classpath,
            main_class,
            str(data / config),
        ]
        with open(data / "logs" / log_name, "ab") as out:
            proc = subprocess.Popen(
                cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
            )
        return proc.pid

    def start_zookeeper(self) -> int:
        return self._spawn(
            "org.apache.zookeeper.server.quorum.QuorumPeerMain", "zookeeper.properties", "128m", "zk.out"
        )

    def start_broker(self, heap: str) -> int:
        return self._spawn("kafka.Kafka", "server.properties", heap, "broker.out")

    def owns(self, pid: int | None) -> bool:
        return pid_owned(pid, self.spec.data_dir)

    # -- readiness -----------------------------------------------------------------------------------
    def zookeeper_ready(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.spec.control_port), timeout=1) as sock:
                sock.sendall(b"ruok")
                return sock.recv(4) == b"imok"
        except OSError:
            return False

    def broker_ready(self) -> bool:
        """Ready means a successful admin call, through this node, that sees every broker of the cluster and every
        topic this node stores, not merely an open port. A broker started again on its data lists itself before its
        topics: its controller sends the live brokers first and the partitions after (seen: 0 topics for over 15 s on
        a busy machine)."""
        if not port_open(self.spec.broker_port):
            return False
        own = f"127.0.0.1:{self.spec.broker_port}"
        config: dict[str, Any] = {**self.spec.client_config(), "bootstrap.servers": own, "logger": _quiet}
        admin = AdminClient(config)
        try:
            metadata = admin.list_topics(timeout=3)
        except Exception:  # KafkaException while the broker registers; the caller retries to a deadline
            return False
        return len(metadata.brokers) == self.spec.brokers and self.stored_topics() <= set(metadata.topics)

    def stored_topics(self) -> set[str]:
        """Topics with a partition in the broker's log directory (`<topic>-<partition>`; not one being deleted)."""
        try:
            entries = list((self.spec.data_dir / "kafka-logs").iterdir())
        except FileNotFoundError:
            return set()
        return {
            m.group(1)
            for e in entries
            if (m := _PARTITION_DIR.match(e.name)) and e.is_dir() and m.group(1) != METADATA_LOG_DIR
        }

    def wait(self, probe_name: str, pid: int, deadline: float) -> None:
        probe = self.zookeeper_ready if probe_name == "zookeeper" else self.broker_ready
        log = self.spec.data_dir / "logs" / ("zk.out" if probe_name == "zookeeper" else "broker.out")
        name = f"{self.spec.alias} node {self.spec.node_id}" if self.spec.brokers > 1 else self.spec.alias
        while time.monotonic() < deadline:
            if not pid_alive(pid):
                raise LocalKafkaError(f"{name}: {probe_name} exited during start-up; see {log}\n{_tail(log)}")
            if probe():
                return
            time.sleep(0.25)
        raise LocalKafkaError(f"{name}: {probe_name} not ready before the deadline; see {log}\n{_tail(log)}")

    def stop(self, pid: int | None, timeout: float = 30.0) -> None:
        """SIGTERM (clean shutdown), then SIGKILL after timeout; only if pid is still our JVM."""
        if not self.owns(pid):
            return
        assert pid is not None
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while self.owns(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if self.owns(pid):
            os.kill(pid, signal.SIGKILL)
        _wait_gone(pid, time.monotonic() + 10)


def new_cluster_id() -> str:
    """A KRaft cluster id as `kafka-storage random-uuid` makes one: 16 random bytes, URL-safe base64, unpadded. Each
    cluster gets its own, as real clusters have (tests and the topology report tell clusters apart by it). Like
    Kafka's own ``Uuid.randomUuid``, it never starts with "-": the storage tool would read that id as an option, and
    one start in 64 failed with "argument --cluster-id/-t: expected one argument"."""
    while (cluster_id := base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()).startswith("-"):
        pass
    return cluster_id


def _tail(log: Path, lines: int = 15) -> str:
    """The last lines of a JVM's output, so a start-up failure names its cause (e.g. a port in use)."""
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return "(no output)"
    return "\n".join(text.splitlines()[-lines:])


def _wait_gone(pid: int, deadline: float) -> None:
    """Reap pid if it is our child; otherwise wait (to a deadline) for its parent or init to reap it."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)


def _write_properties(path: Path, values: dict[str, str]) -> None:
    path.write_text("".join(f"{key}={value}\n" for key, value in values.items()))
