"""Duplicates after kills: a replicator SIGKILLed mid-copy, started again, and left to finish: duplicates and losses.

Method. The replicator copies a preloaded data set (its records carry the keys `key-0` ... `key-<N-1>`) into an
empty target topic. Each time the target has grown by N / (kills + 1) records since the run started, every
process of the replicator's tree gets SIGKILL at once (a crash: nothing stores its position on the way out), and
the replicator starts again on what it left behind: MirrorMaker with the same consumer group, Mirrorplane with
the same flow, hence its positions topic. After the last kill a final run goes on until the target holds every
key and its end offsets stand still for `SETTLE_S`; it then stops cleanly. The target is read from the beginning
(read_committed where the replicator writes transactions) and every record's key is tallied:

- duplicates: records at the target beyond the first copy of each key;
- lost: keys of the source with no copy at the target.

MirrorMaker's consumer commits its offsets every 60 s (`offset.commit.interval.ms`, its default), so a run killed
before its first commit starts over from the beginning of the source. Mirrorplane at least once resumes from what
the target holds (docs/standalone.md, "Restarts at least once"); exactly once, from its last committed transaction.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from dataclasses import asdict, dataclass, field
from typing import Any

from bench.kafkaops import BenchError, delete_topics, read_to_end
from bench.preload import KEEP_FOREVER, Dataset
from bench.procs import process_tree
from bench.replicators import Launch, Replicator, RunContext

SETTLE_S = 3.0  # the target's end offsets stand still this long: the final run has nothing left to copy
POLL_S = 0.05


@dataclass
class KillResult:
    """One replicator's copy of `records` records through `kills` crashes."""

    replicator: str
    records: int
    kills: int
    killed_at: list[int] = field(default_factory=list)  # records at the target when each kill landed
    target_records: int = 0
    duplicates: int = 0
    lost: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def tally(keys: list[bytes | None], records: int) -> tuple[int, int]:
    """(duplicates, lost) of the keys read from the target, against the source's key-0 ... key-<records - 1>.

    A key that is not one of the source's counts as a duplicate: it is a record the source does not hold once."""
    seen = bytearray(records)
    duplicates = 0
    for key in keys:
        index = _index(key)
        if index is None or index >= records or seen[index]:
            duplicates += 1
        else:
            seen[index] = 1
    return duplicates, records - sum(seen)


def _index(key: bytes | None) -> int | None:
    if key is None or not key.startswith(b"key-"):
        return None
    with contextlib.suppress(ValueError):
        return int(key[4:])
    return None


def run_kills(replicator: Replicator, ctx: RunContext, dataset: Dataset, kills: int) -> KillResult:
    """Copy dataset with `kills` crashes on the way; the target topic is deleted afterwards."""
    result = KillResult(replicator.name, dataset.count, kills)
    started = time.monotonic()
    launch = replicator.launch(ctx, dataset.topic, dataset.partitions, KEEP_FOREVER)
    step = dataset.count // (kills + 1)
    try:
        for kill in range(1, kills + 1):
            result.killed_at.append(_kill_after(launch, step, dataset.count))
            launch.close()
            log = launch.child.log_path
            if log.exists():  # the next run writes a log of the same name
                log.rename(log.with_suffix(f".kill{kill}.log"))
            launch = replicator.launch(ctx, dataset.topic, dataset.partitions, KEEP_FOREVER, resume=True)
        _wait_until_complete(launch, dataset.count)
        result.seconds = round(time.monotonic() - started, 1)
    finally:
        usage = launch.child.stop()
        launch.close()
    if usage.exit_code not in replicator.clean_exits:
        raise BenchError(f"{replicator.name} exited with {usage.exit_code}:\n{launch.child.log_tail()}")
    keys = _target_keys(ctx.clusters.target, launch.target_topic, dataset.partitions, launch.isolation)
    result.target_records = len(keys)
    result.duplicates, result.lost = tally(keys, dataset.count)
    delete_topics(ctx.clusters.target, launch.target_topics, wait=False)
    return result


def _kill_after(launch: Launch, step: int, count: int) -> int:
    """SIGKILL the whole tree once this run has added `step` records to the target (or the copy is complete)."""
    base = launch.target.end_sum()
    deadline = time.monotonic() + max(180.0, count / 5000)
    while (written := launch.target.end_sum()) - base < step and launch.replicated() < count:
        if not launch.child.running():
            raise BenchError(f"{launch.child.log_path.name}: the replicator exited early:\n{launch.child.log_tail()}")
        if time.monotonic() > deadline:
            raise BenchError(f"{launch.target_topic}: {written - base} of {step} records before the kill")
        time.sleep(POLL_S)
    for pid in process_tree(launch.child.pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    launch.child.stop()  # reaps it
    return written


def _wait_until_complete(launch: Launch, count: int) -> None:
    deadline = time.monotonic() + max(240.0, count / 2000)
    last, still_since = -1, time.monotonic()
    while True:
        if not launch.child.running():
            raise BenchError(f"{launch.child.log_path.name}: the replicator exited early:\n{launch.child.log_tail()}")
        written = launch.target.end_sum()
        if written != last:
            last, still_since = written, time.monotonic()
        elif launch.replicated() >= count and time.monotonic() - still_since >= SETTLE_S:
            return
        if time.monotonic() > deadline:
            raise BenchError(f"{launch.target_topic}: not complete after the last kill ({launch.replicated()} records)")
        time.sleep(POLL_S * 4)


def _target_keys(bootstrap: str, topic: str, partitions: int, isolation: str) -> list[bytes | None]:
    """The key of every record of topic, from the beginning to its end offsets."""
    keys: list[bytes | None] = []
    read_to_end(bootstrap, topic, partitions, isolation, lambda msg: keys.append(msg.key()))
    return keys
