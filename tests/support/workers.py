"""pytest-xdist workers side by side: each gets its own ports, Redis databases and Kafka state directories.

`make test` runs the suite on several xdist workers (`-n`, `--dist loadfile`: a file's tests stay on one worker, so
a module's fixtures start once). Whatever a whole session shares, the test clusters, the fault clusters, the demo's
ports, the Celery broker's Redis database, is moved out of the other workers' way here; a port or database that one
file alone uses is that file's business. Without xdist the index is 0 and nothing moves.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit, urlunsplit

# Every fixed port range of the project (docs/local-kafka.md, ports) lies 1,000 or more from the next, and the
# ZooKeeper ports of a range sit below it: a stride of 300 keeps two or three workers' ranges apart.
PORT_STRIDE = 300
# Redis has databases 0-15; the test run's defaults are 15 (broker), 14 (workers) and 9 (the fuzzed demo).
REDIS_DB_STRIDE = 2


def worker_index() -> int:
    """0, 1, ... for xdist workers gw0, gw1, ...; 0 without xdist."""
    name = os.environ.get("PYTEST_XDIST_WORKER", "")
    return int(name[2:]) if name.startswith("gw") and name[2:].isdigit() else 0


def port(base: int) -> int:
    """This worker's port (or port base) for one shared by the whole session."""
    return base + PORT_STRIDE * worker_index()


def redis_db(base: int) -> int:
    db = base - REDIS_DB_STRIDE * worker_index()
    if db < 0:
        raise RuntimeError(f"no Redis database left for xdist worker {worker_index()} (from {base})")
    return db


def state_name(name: str) -> str:
    """A state directory's name under var/ for this worker."""
    index = worker_index()
    return f"{name}-gw{index}" if index else name


def redis_url(url: str) -> str:
    """A redis:// URL moved to this worker's database; any other URL as it is."""
    parts = urlsplit(url)
    if parts.scheme != "redis" or not worker_index():
        return url
    path = parts.path.strip("/")
    return urlunsplit(parts._replace(path=f"/{redis_db(int(path) if path.isdigit() else 0)}"))
