"""Partition ownership among a flow's tasks, without Kafka."""

from __future__ import annotations

import pytest

from replication.task.ownership import PlannedOwner, deal, hashed_owner, split


def test_a_deal_gives_each_task_its_count_in_runs_and_every_partition_once() -> None:
    keys = [(f"t{i:03d}", p) for i in range(100) for p in range(10)]
    dealt = deal(list(reversed(keys)), [250, 250, 250, 250])
    assert [len(d) for d in dealt] == [250] * 4
    assert sorted(k for d in dealt for k in d) == keys
    assert max(len({t for t, _ in d}) for d in dealt) <= 33  # 8 runs of about 31 consecutive partitions


def test_a_deal_of_fewer_partitions_than_runs_is_round_robin() -> None:
    keys = [("a", p) for p in range(8)]
    assert deal(keys, split(8, 4)) == [[("a", p), ("a", p + 4)] for p in range(4)]


def test_a_deal_refuses_counts_that_do_not_add_up() -> None:
    with pytest.raises(ValueError, match="3 partitions"):
        deal([("a", 0), ("a", 1), ("a", 2)], [1, 1])


@pytest.mark.parametrize("tasks", [1, 3, 4])
def test_planned_owners_of_every_task_own_each_partition_exactly_once(tasks: int) -> None:
    start = {f"t{i}": 10 for i in range(40)} | {"heartbeats": 1}
    owners = [PlannedOwner(start, tasks, t) for t in range(tasks)]
    later = [("t0", 10), ("t0", 11), ("new", 0), ("new", 1), ("new", 2)]  # partitions and topics added after start
    for key in [(t, p) for t, n in start.items() for p in range(n)] + later:
        assert sum(owner(*key) for owner in owners) == 1, key
    shares = [sum(owner(t, p) for t, n in start.items() for p in range(n)) for owner in owners]
    assert max(shares) - min(shares) <= 1
    for key in later:  # not in the start listing: hashed, as every task computes alike
        assert [owner(*key) for owner in owners] == [hashed_owner(tasks, t)(*key) for t in range(tasks)]
