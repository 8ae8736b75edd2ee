"""A benchmark session: the clusters, where run configs and logs go, and a fresh id for every run."""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.clusters import BenchClusters
from bench.replicators import RunContext

WORKDIR = Path("var/bench")


@dataclass
class Session:
    """Run ids carry the session's time, so reused clusters never see a topic or alias twice."""

    clusters: BenchClusters
    stamp: str = field(default_factory=lambda: time.strftime("%Y%m%dT%H%M%S"))
    workdir: Path = WORKDIR
    counter: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def context(self) -> RunContext:
        """Configs and child logs go to var/bench/<stamp>/; look there when a replicator fails."""
        return RunContext(
            self.clusters, self.workdir / self.stamp, f"{self.stamp[4:8]}{self.stamp[9:]}r{next(self.counter):02d}"
        )
