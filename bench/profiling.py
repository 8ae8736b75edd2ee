"""Where a replicator's CPU goes: py-spy attached to the engine's process, and a summary of its collapsed stacks.

py-spy is not a project dependency: `.venv/bin/pip install py-spy==0.4.3`.
"""

from __future__ import annotations

import collections
import shutil
import sys
from pathlib import Path

from bench.kafkaops import BenchError
from bench.procs import Child


def attach(pid: int, out: Path, native: bool = True, idle: bool = False) -> Child:
    """Sample pid (and its task processes) until it exits; `out` gets collapsed stacks, one 'frames count' per line.

    By default only running threads are sampled (where CPU goes); idle=True also samples waits (where time goes).
    """
    py_spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    if not Path(py_spy).is_file():
        raise BenchError("py-spy is not installed: .venv/bin/pip install py-spy==0.4.3")
    argv = [
        py_spy,
        "record",
        "--pid",
        str(pid),
        "--rate",
        "250",
        "--format",
        "raw",
        "--subprocesses",
        "--output",
        str(out),
        *(["--native"] if native else []),
        *(["--idle"] if idle else []),
    ]
    return Child(argv, out.with_suffix(".log"))


def _frame_name(frame: str) -> str:
    """'produce (replication/task/producing.py:71)' -> 'producing.py:produce'; native frames stay as they are."""
    name, _, where = frame.partition(" (")
    return f"{Path(where.split(':')[0]).name}:{name}" if where else name


def summarize(raw: Path, top: int = 20) -> str:
    """Inclusive and self share of samples per function, the biggest first."""
    inclusive: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        count = int(count_text)
        frames = [_frame_name(f) for f in stack.split(";")[1:]]  # the first frame names the process/thread
        total += count
        for name in set(frames):
            inclusive[name] += count
        if frames:
            own[frames[-1]] += count
    lines = [f"{total} samples; inclusive % / self % per function"]
    for name, count in inclusive.most_common(top):
        lines.append(f"{100 * count / total:6.1f} {100 * own[name] / total:6.1f}  {name}")
    return "\n".join(lines)
