from __future__ import annotations

from collections.abc import Iterable, Mapping

from controlplane.orchestration.planning import Plan, TopicPartition, is_balanced, plan_assignment


def tps(topic: str, n: int) -> list[tuple[str, int]]:
    return [(topic, p) for p in range(n)]


def moved_partitions(before: Mapping[int, Iterable[TopicPartition]], after: Plan) -> int:
    """How many partitions changed task between two plans (new and dropped ones are not moves)."""
    owner = {tp: task for task, tps in before.items() for tp in tps}
    return sum(1 for task, tps in after.items() for tp in tps if tp in owner and owner[tp] != task)


def test_a_fresh_plan_is_balanced_over_tasks_max() -> None:
    plan = plan_assignment(tps("a", 5) + tps("b", 3), tasks_max=3, current={})
    assert sorted(len(v) for v in plan.values()) == [2, 3, 3]
    assert sorted(tp for v in plan.values() for tp in v) == sorted(tps("a", 5) + tps("b", 3))


def test_new_partitions_go_to_the_least_loaded_task_and_nothing_else_moves() -> None:
    before = plan_assignment(tps("a", 4), tasks_max=2, current={})
    after = plan_assignment(tps("a", 4) + tps("new", 2), tasks_max=2, current=before)
    assert moved_partitions(before, after) == 0
    for task, owned in before.items():
        assert set(owned) <= set(after[task])
    assert is_balanced(after)


def test_an_imbalance_is_kept_until_rebalancing_is_allowed() -> None:
    skewed = {0: tps("a", 6), 1: []}
    sticky = plan_assignment(tps("a", 6), tasks_max=2, current=skewed)
    assert sticky == {0: tps("a", 6), 1: []}
    balanced = plan_assignment(tps("a", 6), tasks_max=2, current=skewed, rebalance=True)
    assert sorted(len(v) for v in balanced.values()) == [3, 3]
    assert moved_partitions(skewed, balanced) == 3


def test_vanished_partitions_and_surplus_tasks_are_dropped() -> None:
    before = {0: tps("a", 2), 1: tps("b", 2), 2: tps("c", 2)}
    after = plan_assignment(tps("a", 2) + tps("c", 2), tasks_max=2, current=before)
    assert after[0] == tps("a", 2)
    assert set(after) == {0, 1}
    assert sorted(after[1]) == tps("c", 2)


def test_a_large_fresh_plan_keeps_runs_of_a_topics_partitions_together() -> None:
    """1,000 topics of 10 over 4 tasks: each task's consumer fetches about a quarter of the topics, not all."""
    partitions = [tp for i in range(1000) for tp in tps(f"t{i:04d}", 10)]
    plan = plan_assignment(partitions, tasks_max=4, current={})
    assert sorted(len(v) for v in plan.values()) == [2500] * 4
    assert sorted(tp for v in plan.values() for tp in v) == sorted(partitions)
    topics_per_task = [len({t for t, _ in owned}) for owned in plan.values()]
    assert max(topics_per_task) <= 260, topics_per_task


def test_a_small_topic_still_spreads_over_every_task() -> None:
    """A busy topic of 8 partitions uses all 4 tasks, as MM2's round-robin does."""
    plan = plan_assignment(tps("busy", 8) + tps("quiet", 8), tasks_max=4, current={})
    assert all(sum(1 for t, _ in owned if t == "busy") == 2 for owned in plan.values()), plan
