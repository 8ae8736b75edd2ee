"""The drain's trend, ETA and its reason for not completing, on a fake flow status and fake end offsets."""

from __future__ import annotations

from typing import Any

import pytest

from controlplane.clusters.models import Cluster
from controlplane.failover.api.serializers import DrainStepSerializer, StepsSerializer
from controlplane.failover.models import Failover
from controlplane.failover.results import DrainResult, StepEntry
from controlplane.failover.services import context, drain
from controlplane.orchestration.taskstatus import FlowStatus, TaskStatus
from replication.config import ClusterConfig, FlowConfig
from tests.support.documented import assert_documented

FLOW = FlowConfig(
    source=ClusterConfig("us-west", {"bootstrap.servers": "127.0.0.1:1"}),
    target=ClusterConfig("us-east", {"bootstrap.servers": "127.0.0.1:2"}),
)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """``lag`` is the flow's lag, ``end`` the source end offset and ``now`` the clock: the test moves them."""
    state: dict[str, Any] = {"lag": 900, "end": 10_000, "now": 1000.0}

    def status(flow: Any) -> FlowStatus:
        task = TaskStatus(task_id=0, state="RUNNING", partition_count=2, lag=state["lag"])
        return FlowStatus(flow=1, name="us-west->us-east", tasks=(task,))

    def end_offsets(cluster: Any, partitions: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
        assert partitions == [("orders", 0)]
        return {partitions[0]: state["end"]}

    monkeypatch.setattr(drain, "flow_status", status)
    # heartbeats: written by replication itself, so left out of the source end offsets
    monkeypatch.setattr(drain, "reported_partitions", lambda flow_id: {("orders", 0), ("heartbeats", 0)})
    monkeypatch.setattr(drain, "flow_config", lambda flow: FLOW)
    monkeypatch.setattr(drain.kafka, "end_offsets", end_offsets)
    monkeypatch.setattr(context, "flows", lambda failover: context.Flows(object(), None))  # type: ignore[arg-type]
    monkeypatch.setattr(drain.time, "time", lambda: state["now"])
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
    assert_documented(served, DrainStepSerializer())
