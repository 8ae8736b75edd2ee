"""MirrorMaker 2 in dedicated mode (`org.apache.kafka.connect.mirror.MirrorMaker`, KIP-382), from Apache's own
jars on Maven Central: the same pinned release and classpath as the local brokers (localkafka/maven/pom.xml).

The benchmark and the interoperability tests run it beside Mirrorplane on the same brokers. MirrorMaker 2 first
shipped in Kafka 2.4, so it always runs from a 3.x/4.x classpath, also against the 2.3.0 brokers (its clients
still speak to them).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType

from localkafka.dist import DEFAULT_KAFKA_VERSION, LEGACY_KAFKA_VERSION, TOOL_MAIN_CLASSES, LocalKafkaError, runtime
from localkafka.manager import default_cache_dir
from replication.mm2.takeover import offsets_storage_topic

MAIN_CLASS = TOOL_MAIN_CLASSES["connect-mirror-maker"]
__all__ = ["LOCAL_DEFAULTS", "MirrorMaker2", "dedicated_properties", "offsets_storage_topic", "properties_text"]
STARTED_LINE = "Kafka MirrorMaker started"  # what MirrorMaker.start() logs once its herders run
# Small local clusters: one replica for everything MM2 creates, and the short intervals its own integration tests
# use, so checkpoints, offset syncs and committed offsets show within seconds.
LOCAL_DEFAULTS: dict[str, str] = {
    "replication.factor": "1",
    "checkpoints.topic.replication.factor": "1",
    "heartbeats.topic.replication.factor": "1",
    "offset-syncs.topic.replication.factor": "1",
    "offset.storage.replication.factor": "1",
    "status.storage.replication.factor": "1",
    "config.storage.replication.factor": "1",
    "refresh.topics.interval.seconds": "1",
    "refresh.groups.interval.seconds": "1",
    "emit.checkpoints.interval.seconds": "1",
    "emit.heartbeats.interval.seconds": "1",
    "sync.group.offsets.interval.seconds": "1",
    "offset.flush.interval.ms": "1000",
}


def properties_text(properties: Mapping[str, str]) -> str:
    """A Java properties file of `properties`, one `key = value` per line, in the given order."""
    return "".join(f"{key} = {value}\n" for key, value in properties.items())


def dedicated_properties(
    clusters: Mapping[str, str],
    flows: Sequence[tuple[str, str]],
    extra: Mapping[str, str] | None = None,
    local_defaults: bool = True,
) -> dict[str, str]:
    """An MM2 properties file for `clusters` (alias -> bootstrap servers) with each (source, target) flow enabled;
    `extra` is applied last (e.g. `us-west->us-east.topics`, `tasks.max`, client overrides)."""
    props: dict[str, str] = {"clusters": ", ".join(clusters)}
    for alias, bootstrap in clusters.items():
        props[f"{alias}.bootstrap.servers"] = bootstrap
    for source, target in flows:
        props[f"{source}->{target}.enabled"] = "true"
    if local_defaults:
        props.update(LOCAL_DEFAULTS)
    props.update(extra or {})
    return props


class MirrorMaker2:
    """One dedicated MM2 process: `start()`, then `stop()` (SIGTERM, its shutdown hook runs) or `kill()` (SIGKILL).

    Its properties file, its stdout (`<name>.out`: warnings and anything the JVM prints) and its log
    (`<name>-logs/server.log`, at INFO) are in `workdir`; `log_tail()` gives the end of both for a failure message.
    """

    def __init__(
        self,
        properties: Mapping[str, str],
        workdir: Path,
        cache_dir: Path | None = None,
        version: str = DEFAULT_KAFKA_VERSION,
        heap: str = "512m",
        name: str = "mm2",
    ) -> None:
        if version == LEGACY_KAFKA_VERSION:
            raise LocalKafkaError(f"MirrorMaker 2 is not in Kafka {LEGACY_KAFKA_VERSION}: run it from 3.x or 4.x")
        self.properties = dict(properties)
        self.workdir = workdir
        self.cache_dir = cache_dir
        self.version = version
        self.heap = heap
        self.properties_path = workdir / f"{name}.properties"
        self.out_path = workdir / f"{name}.out"
        self.logs_dir = workdir / f"{name}-logs"
        self.log_path = self.logs_dir / "server.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def command(self) -> list[str]:
        kafka = runtime(self.version, self.cache_dir or default_cache_dir())
        return [
            kafka.java,
            f"-Xmx{self.heap}",
            *kafka.log_options(self.logs_dir),
            "-cp",
            kafka.classpath,
            MAIN_CLASS,
            str(self.properties_path),
        ]

    def start(self, timeout: float = 120.0) -> MirrorMaker2:
        """Start MM2 and wait, up to `timeout` seconds, until it logs that it started (its herders run; the
        connectors then start on their own). Raises LocalKafkaError with the log's end if it exits or times out."""
        if self.proc is not None and self.proc.poll() is None:
            raise LocalKafkaError(f"MirrorMaker 2 already runs as pid {self.proc.pid}")
        self.logs_dir.mkdir(parents=True, exist_ok=True)
        self.properties_path.write_text(properties_text(self.properties))
        command = self.command()
        with open(self.out_path, "ab") as out:
            self.proc = subprocess.Popen(
                command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
            )
        try:
            self.wait_for(lambda: STARTED_LINE in self.log_text(), timeout, "MirrorMaker 2 to start")
        except BaseException:
            self.kill()  # never left behind: another MM2 in the same Connect groups would take its connectors
            raise
        return self

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def log_tail(self, chars: int = 4000) -> str:
        """The end of MM2's stdout, then its log's ERROR lines and last lines."""
        out = self.out_path.read_text(errors="replace") if self.out_path.exists() else ""
        lines = self.log_text().splitlines()
        errors = [line for line in lines if "] ERROR " in line][-10:]
        return "\n".join([out[-chars // 2 :], *errors, *lines[-20:]])[-chars:]

    def wait_for(self, condition: Callable[[], bool], timeout: float, what: str) -> None:
        """Wait until condition() holds while MM2 runs; LocalKafkaError naming `what` if MM2 exits or time runs out."""
        deadline = time.monotonic() + timeout
        while not condition():
            if not self.running():
                code = None if self.proc is None else self.proc.returncode
                raise LocalKafkaError(f"MirrorMaker 2 exited ({code}) while waiting for {what}:\n{self.log_tail()}")
            if time.monotonic() > deadline:
                raise LocalKafkaError(f"timed out after {timeout:.0f}s waiting for {what}:\n{self.log_tail()}")
            time.sleep(0.2)

    def stop(self, timeout: float = 60.0) -> int | None:
        """SIGTERM, then wait for MM2's shutdown hook to commit and exit; SIGKILL after `timeout`. The exit code."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        return self.proc.returncode

    def kill(self) -> None:
        """SIGKILL: nothing is committed or flushed, as when a host dies."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(30)

    def __enter__(self) -> MirrorMaker2:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()
