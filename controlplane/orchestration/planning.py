"""Partition-to-task planning, the uReplicator way: balanced, sticky, and never a rebalance storm.

A flow's source partitions are spread over at most `tasks.max` tasks. Existing placements stay put; new partitions
go to the least-loaded tasks at once (data never waits for a rebalance), in runs of consecutive partitions so that a
large flow's consumers each fetch fewer topics (replication.task.ownership); a partition that vanished is dropped at
once. Moving existing partitions to even out load happens only when the caller allows it, which the
controller does once an imbalance has lasted the configured delay.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from replication.task.ownership import deal

TopicPartition = tuple[str, int]
Plan = dict[int, list[TopicPartition]]


def runs(task_id: int, partitions: int) -> bool:
    """Whether a task needs a runner: task 0 always (it emits the flow's heartbeats and checkpoints, which a
    failback flow needs before its source has any matching topic), any other task when it has partitions (their
    number)."""
    return task_id == 0 or partitions > 0


def plan_assignment(
    partitions: Iterable[TopicPartition],
    tasks_max: int,
    current: Mapping[int, Iterable[TopicPartition]],
    rebalance: bool = False,
) -> Plan:
    """The new task -> partitions plan; sorted lists, tasks 0..tasks_max-1 always present."""
    wanted = set(partitions)
    plan: Plan = {task: [] for task in range(tasks_max)}
    placed: set[TopicPartition] = set()
    for task, owned in current.items():
        if task in plan:
            keep = [tp for tp in owned if tp in wanted and tp not in placed]
            plan[task].extend(keep)
            placed.update(keep)
    new = sorted(wanted - placed)
    sizes = {task: len(owned) for task, owned in plan.items()}
    counts = dict.fromkeys(plan, 0)
    for _ in new:  # how many each task takes: always the least-loaded next
        least = min(sizes, key=lambda t: (sizes[t], t))
        sizes[least] += 1
        counts[least] += 1
    for task, dealt in zip(plan, deal(new, [counts[task] for task in plan]), strict=True):
        plan[task].extend(dealt)
    if rebalance:
        _even_out(plan)
    return {task: sorted(tps) for task, tps in plan.items()}


def is_balanced(plan: Mapping[int, list[TopicPartition]]) -> bool:
    sizes = [len(tps) for tps in plan.values()]
    return not sizes or max(sizes) - min(sizes) <= 1


def _even_out(plan: Plan) -> None:
    """Move the fewest partitions needed, from the most- to the least-loaded task."""
    while not is_balanced(plan):
        most = max(plan, key=lambda t: (len(plan[t]), -t))
        least = min(plan, key=lambda t: (len(plan[t]), t))
        plan[least].append(max(plan[most]))
        plan[most].remove(max(plan[most]))
