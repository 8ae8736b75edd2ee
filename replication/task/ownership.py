"""Which task of a flow replicates which source partition.

Partitions are dealt to tasks in `ROUNDS` rounds of consecutive runs (sorted by topic, then partition). A small flow
therefore spreads partition by partition, as MM2's round-robin does, and a busy topic uses every task. A large flow
keeps runs of a topic's partitions together, so each task's consumer fetches fewer topics: librdkafka's cost per
fetch round grows with topics times partitions (it looks up each topic of a fetch response in a list of the
client's topics). An idle consumer of 2,500 partitions spread over 1,000 topics used 1.1-1.6 % of a core; over 250
topics, 0.6-0.7 % (bench/README.md). A task's share is the same size either way.

The control plane's planner deals new partitions this way (controlplane/orchestration/planning.py). The standalone
runner deals the partitions its provisioning listed (`PlannedOwner`); partitions that appear while it runs are
hashed, so every task decides them alike without asking the others.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping, Sequence

TopicPartitionKey = tuple[str, int]
ROUNDS = 8


def split(count: int, parts: int) -> list[int]:
    """`count` in `parts` sizes that differ by at most one, the larger first."""
    q, r = divmod(count, parts)
    return [q + 1 if i < r else q for i in range(parts)]


def deal(partitions: Sequence[TopicPartitionKey], counts: Sequence[int]) -> list[list[TopicPartitionKey]]:
    """The partitions, sorted, dealt so that task i gets counts[i] of them, in ROUNDS runs of consecutive ones."""
    keys = sorted(partitions)
    if sum(counts) != len(keys):
        raise ValueError(f"{len(keys)} partitions cannot be dealt as {list(counts)}")
    runs = [split(count, ROUNDS) for count in counts]
    dealt: list[list[TopicPartitionKey]] = [[] for _ in counts]
    taken = 0
    for round_ in range(ROUNDS):
        for task, sizes in enumerate(runs):
            dealt[task].extend(keys[taken : taken + sizes[round_]])
            taken += sizes[round_]
    return dealt


def hashed_owner(tasks: int, task_id: int) -> Callable[[str, int], bool]:
    """Stable ownership of a partition nobody dealt: every task computes the same answer on its own."""
    return lambda topic, partition: zlib.crc32(f"{topic}-{partition}".encode()) % tasks == task_id


class PlannedOwner:
    """A standalone task's ownership: the partitions of `start` (topic -> partition count, as the runner's
    provisioning listed them, the same for every task) dealt evenly; any other partition hashed."""

    def __init__(self, start: Mapping[str, int], tasks: int, task_id: int) -> None:
        keys = [(topic, p) for topic, count in start.items() for p in range(count)]
        self._planned = {key: task for task, owned in enumerate(deal(keys, split(len(keys), tasks))) for key in owned}
        self._hashed = hashed_owner(tasks, task_id)
        self.task_id = task_id

    def __call__(self, topic: str, partition: int) -> bool:
        planned = self._planned.get((topic, partition))
        return self._hashed(topic, partition) if planned is None else planned == self.task_id
