"""`python -m replication takeover`, and `run --take-over-from-mm2`: continue the flows of a stopped MirrorMaker 2.

Each enabled flow's start positions are seeded from MM2's committed offsets (replication.task.takeover) and one
line per partition says where it starts. A flow whose MM2 offsets cannot be read is named, and nothing runs.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TextIO

from replication.config import FlowConfig

TAKEOVER_HELP = (
    "before the flows start, seed their start positions from a stopped MirrorMaker 2's committed offsets "
    "(mm2-offsets.<source>.internal in the target); refuses to start if they cannot be read"
)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser], config_type: type) -> None:
    takeover = sub.add_parser(
        "takeover", help="seed the flows' start positions from a stopped MirrorMaker 2's committed offsets, then exit"
    )
    takeover.add_argument("--config", type=config_type, required=True, help="MM2-style properties file")


def take_over(flows: Sequence[FlowConfig], out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Take over every enabled flow; 0, or 2 naming the flow and the topic that could not be read."""
    out, err = out or sys.stdout, err or sys.stderr
    from replication.task.takeover import TakeoverError
    from replication.task.takeover import take_over as take_over_flow

    for flow in flows:
        if not flow.enabled:
            continue
        try:
            result = take_over_flow(flow)
        except TakeoverError as exc:
            print(f"error: {flow.name}: not taken over from MM2: {exc}", file=err)
            return 2
        out.write("\n".join(result.lines()) + "\n")
        out.flush()
    return 0
