"""The drain's scope (the groups' partitions), trend, ETA and its reason for not completing, on fake partition
reports, fake committed offsets and fake end offsets."""

from __future__ import annotations

from typing import Any

import pytest

from controlplane.clusters.models import Cluster
from controlplane.failover.api.serializers import ENTRY_SERIALIZERS, StepsSerializer
from controlplane.failover.models import Failover
from controlplane.failover.results import DrainResult, StepEntry
from controlplane.failover.services import context, drain
from controlplane.flows.models import Flow
from replication.config import ClusterConfig, FlowConfig
from tests.support.documented import assert_documented

FLOW = FlowConfig(
    source=ClusterConfig("us-west", {"bootstrap.servers": "127.0.0.1:1"}),
    target=ClusterConfig("us-east", {"bootstrap.servers": "127.0.0.1:2"}),
    topics=("orders", "clicks"),
)


class FakeGroups:
    def __init__(self, committed: dict[str, dict[tuple[str, int], int]]) -> None:
        self.by_group = committed

    def committed(self, group: str) -> dict[tuple[str, int], int]:
        return self.by_group.get(group, {})


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """``lag`` is the lag reported for orders-0, ``end`` its source end offset and ``now`` the clock: the test moves
    them. The flow also replicates clicks-0, which billing does not read and a producer keeps writing."""
    state: dict[str, Any] = {"lag": 900, "end": 10_000, "now": 1000.0, "clicks_end": 50_000}
    # billing committed on orders-0, on a topic the flow does not replicate and on heartbeats (both left out)
    groups = FakeGroups({"billing": {("orders", 0): 5, ("local-only", 0): 7, ("heartbeats", 0): 1}})

    def end_offsets(cluster: Any, partitions: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
        return {partition: state["end"] for partition in partitions}

    def lags(flow_id: int, topics: set[str]) -> dict[tuple[str, int], int | None]:
        return {
            (t, p): lag for (t, p), lag in {("orders", 0): state["lag"], ("clicks", 0): 70_000}.items() if t in topics
        }

    monkeypatch.setattr(drain, "reported_lags", lags)
    monkeypatch.setattr(drain, "flow_config", lambda flow: FLOW)
    monkeypatch.setattr(drain.kafka, "end_offsets", end_offsets)
    monkeypatch.setattr(drain.kafka, "groups", lambda cluster: groups)
    flow = Flow(pk=1)
    monkeypatch.setattr(context, "flows", lambda failover: context.Flows(flow, None))
    monkeypatch.setattr(drain.time, "time", lambda: state["now"])
    state["groups"] = groups
    return state


def planned(threshold: int) -> Failover:
    return Failover(mode="planned", source=Cluster(alias="us-west"), groups=["billing"], drain_threshold=threshold)


def poll(failover: Failover) -> DrainResult:
    result, complete = drain.drain_step(failover, {})
    failover.steps = {**failover.steps, "drain": StepEntry(result, complete=complete).as_json()}
    return result


def test_a_drain_to_zero_under_live_traffic_says_the_producers_are_still_writing(fake: dict[str, Any]) -> None:
    failover = planned(0)
    poll(failover)
    fake.update(now=1010.0, lag=40, end=12_000)  # 200 records/s still written; the lag hovers above 0
    result = poll(failover)
    assert (result.waiting, result.producers_writing, result.source_write_rate) == (True, True, 200.0)
    assert result.why is not None and "producers are still writing (~200 records/s), so the lag cannot" in result.why
    assert [s.lag for s in result.trend] == [900, 40]


def test_a_falling_lag_gives_an_eta_and_the_drain_completes_at_the_threshold(fake: dict[str, Any]) -> None:
    failover = planned(100)
    poll(failover)
    fake.update(now=1010.0, lag=500)  # falling 40 records/s, nothing written: (500 - 100) / 40 = 10 s
    result = poll(failover)
    assert (result.lag_rate, result.eta_seconds, result.producers_writing, result.why) == (
        -40.0,
        10.0,
        False,
        None,
    )
    fake.update(now=1020.0, lag=90)
    result, complete = drain.drain_step(failover, {})
    assert complete and result.eta_seconds == 0 and result.initial_lag == 900


def test_the_trend_keeps_the_last_samples_only(fake: dict[str, Any]) -> None:
    failover = planned(0)
    for second in range(drain.TREND_SAMPLES + 5):
        fake.update(now=1000.0 + second)
        result = poll(failover)
    assert len(result.trend) == drain.TREND_SAMPLES


def test_an_unreachable_source_leaves_the_write_rate_unknown_and_names_why(
    fake: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    def down(cluster: Any, partitions: Any) -> dict[Any, int]:
        raise RuntimeError("broker down")

    monkeypatch.setattr(drain.kafka, "end_offsets", down)
    result = poll(planned(0))
    assert (result.source_write_rate, result.source_error) == (None, "RuntimeError: broker down")


def test_a_drain_to_zero_completes_only_once_the_producers_stopped(fake: dict[str, Any]) -> None:
    failover = planned(0)
    fake.update(lag=0)
    first = poll(failover)  # a lag of 0, but is anyone still writing? One check cannot tell
    assert first.waiting and first.why is not None and "second check" in first.why
    fake.update(now=1002.0, end=10_400)
    writing = poll(failover)  # 0 again, read between two fetches while 200 records/s arrive
    assert writing.waiting and writing.producers_writing
    fake.update(now=1004.0)
    result, complete = drain.drain_step(failover, {})
    assert complete and result.source_write_rate == 0.0 and result.why is None


def test_what_the_drain_stores_is_served_as_stored_with_every_field_described(fake: dict[str, Any]) -> None:
    failover = planned(0)
    poll(failover)
    fake.update(now=1010.0, lag=40, end=12_000)
    poll(failover)
    served = StepsSerializer(failover.entries).data["drain"]
    assert served == failover.steps["drain"]
    assert_documented(served, ENTRY_SERIALIZERS["drain"]())


def test_the_drain_measures_only_the_partitions_the_groups_committed_on(fake: dict[str, Any]) -> None:
    result = poll(planned(100))
    assert [(p.topic, p.partition, p.lag, p.source_end) for p in result.partitions] == [("orders", 0, 900, 10_000)]
    assert (result.lag, result.trend[-1].source_end) == (900, 10_000)  # not clicks-0's 70,000


def test_a_partition_with_no_lag_reported_yet_keeps_the_drain_waiting_and_is_named(fake: dict[str, Any]) -> None:
    fake["groups"].by_group = {"billing": {("orders", 0): 5, ("clicks", 3): 9}}  # clicks-3: no task reported it yet
    fake.update(lag=0)
    result, complete = drain.drain_step(planned(100), {})
    assert not complete and result.lag is None
    assert result.why is not None and "no lag yet for clicks-3" in result.why


def test_groups_with_nothing_committed_in_the_flow_have_nothing_to_drain(fake: dict[str, Any]) -> None:
    fake["groups"].by_group = {"billing": {("local-only", 0): 7}}
    result, complete = drain.drain_step(planned(0), {})
    assert complete and (result.lag, result.partitions) == (0, ())


def test_unreadable_group_offsets_keep_the_last_partitions_and_say_why(
    fake: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    failover = planned(0)
    poll(failover)

    class Down:
        def committed(self, group: str) -> dict[tuple[str, int], int]:
            raise RuntimeError("coordinator not available")

    monkeypatch.setattr(drain.kafka, "groups", lambda cluster: Down())
    fake.update(now=1002.0, lag=300)
    result = poll(failover)
    assert [(p.topic, p.lag) for p in result.partitions] == [("orders", 300)]
    assert result.partitions_error == "RuntimeError: coordinator not available"
