"""`python -m replication offsets translate`: a consumer group's offsets for failing over to the target cluster.

`--format table` (default) shows per partition the upstream committed offset, the translated downstream offset,
how it was derived (sync: exact; timestamp: approximate, with the window at risk) and the downstream lag.
`--format csv` prints only `topic,partition,offset` lines with remote topic names, the input of
`kafka-consumer-groups --reset-offsets --from-file`; approximate rows are named on stderr.

`--from checkpoints` reads the group's newest checkpoints in the target instead of its committed offsets in the
source, as MM2's `RemoteClusterUtils.translateOffsets` does: it needs no access to the source, reads checkpoints
written by MirrorMaker 2 as well as by Mirrorplane, and is as exact as whoever wrote them (method `checkpoint`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from replication.config import FlowConfig

if TYPE_CHECKING:  # imported when used: `--help` and `run` need no Kafka clients for offsets
    from replication.offsets.translation import Translation

HEADERS = ("TOPIC", "PARTITION", "UPSTREAM-OFFSET", "REMOTE-TOPIC", "DOWNSTREAM-OFFSET", "METHOD", "LAG")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser], config_type: type) -> None:
    offsets = sub.add_parser("offsets", help="consumer group offsets across a flow")
    actions = offsets.add_subparsers(dest="action", required=True)
    translate = actions.add_parser("translate", help="translate a source group's committed offsets to the target")
    translate.add_argument("--config", type=config_type, required=True, help="MM2-style properties file")
    translate.add_argument("--group", required=True, help="consumer group id in the source cluster")
    translate.add_argument("--source", required=True, help="source cluster alias")
    translate.add_argument("--target", required=True, help="target cluster alias")
    translate.add_argument("--format", choices=["table", "csv"], default="table")
    translate.add_argument(
        "--from",
        dest="origin",
        choices=["syncs", "checkpoints"],
        default="syncs",
        help="syncs: the group's committed offsets in the source, through the offset syncs (default); "
        "checkpoints: the group's newest checkpoints in the target (RemoteClusterUtils.translateOffsets)",
    )


def find_flow(flows: Sequence[FlowConfig], source: str, target: str) -> FlowConfig | None:
    return next((f for f in flows if f.source.alias == source and f.target.alias == target), None)


def format_table(rows: Sequence[Translation]) -> str:
    cells = [HEADERS] + [
        (
            r.topic,
            str(r.partition),
            str(r.upstream_offset),
            r.remote_topic,
            str(r.downstream_offset),
            r.method,
            str(r.lag),
        )
        for r in rows
    ]
    widths = [max(len(row[i]) for row in cells) for i in range(len(HEADERS))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in cells]
    notes = [f"{r.topic}-{r.partition}: {r.window}" for r in rows if r.approximate]
    return "\n".join(lines + (["", *notes] if notes else [])) + "\n"


def format_csv(rows: Sequence[Translation]) -> str:
    return "".join(f"{r.remote_topic},{r.partition},{r.downstream_offset}\n" for r in rows)


def translate(
    flow: FlowConfig,
    group: str,
    output: str,
    out: TextIO | None = None,
    err: TextIO | None = None,
    origin: str = "syncs",
) -> int:
    out, err = out or sys.stdout, err or sys.stderr  # looked up now: callers and tests may have replaced them
    from replication.offsets.translation import OffsetTranslator, from_checkpoints

    if origin == "checkpoints":
        rows = from_checkpoints(flow, group)
        missing = f"group {group!r} has no checkpoint from {flow.source.alias} in {flow.target.alias}"
    else:
        translator = OffsetTranslator(flow)
        try:
            rows = translator.translate_group(group)
        finally:
            translator.close()
        missing = f"group {group!r} has no committed offsets in topics {flow.name} replicates"
    if not rows:
        print(missing, file=err)
        return 1
    if output == "csv":
        out.write(format_csv(rows))
        for r in rows:
            if r.approximate:
                print(f"warning: {r.remote_topic},{r.partition} is approximate: {r.window}", file=err)
    else:
        out.write(format_table(rows))
    return 0
