"""``manage.py rate_check``: the brokers' side read from real clusters, the comparison on known readings."""

from __future__ import annotations

import uuid
from io import StringIO
from typing import Any

import pytest
from confluent_kafka import Producer
from django.core.management import CommandError, call_command

from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from controlplane.monitoring.services import ratecheck
from tests.support.kafka import create_topic

pytestmark = pytest.mark.django_db


def _flow(tag: str, source: str = "127.0.0.1:1", target: str = "127.0.0.1:1") -> Flow:
    west = Cluster.objects.create(alias=f"west{tag}", bootstrap_servers=source)
    east = Cluster.objects.create(alias=f"east{tag}", bootstrap_servers=target)
    return Flow.objects.create(source=west, target=east)


@pytest.mark.kafka
def test_the_brokers_side_sums_the_end_offsets_of_the_flows_remote_topics_only(kafka_clusters: dict[str, str]) -> None:
    tag = uuid.uuid4().hex[:8]
    flow = _flow(tag, kafka_clusters["us-west"], kafka_clusters["us-east"])
    remote, other = f"west{tag}.orders", f"elsewhere{tag}.orders"
    for topic in (remote, other):
        create_topic(kafka_clusters["us-east"], topic, partitions=2)
    producer = Producer({"bootstrap.servers": kafka_clusters["us-east"]})
    for i in range(30):
        producer.produce(remote, b"r", partition=i % 2)
    for _ in range(7):
        producer.produce(other, b"o")
    assert producer.flush(30) == 0

    assert ratecheck.remote_end_offsets(flow) == 30


def _measured(monkeypatch: pytest.MonkeyPatch, flow: Flow, readings: list[float], gained: int, seconds: float) -> str:
    ends = iter([1000, 1000 + gained])
    monkeypatch.setattr(ratecheck, "remote_end_offsets", lambda _flow: next(ends))
    values = iter(readings)
    monkeypatch.setattr(
        ratecheck, "dashboard", lambda: {"edges": [{"name": flow.name, "records_per_second": next(values)}]}
    )
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    original = ratecheck.measure

    def measure(flows: list[Flow], seconds: float, interval: float, **_: Any) -> list[ratecheck.FlowRates]:
        return original(flows, seconds, interval, clock=lambda: now[0], sleep=sleep)

    monkeypatch.setattr("controlplane.monitoring.management.commands.rate_check.measure", measure)
    out = StringIO()
    call_command("rate_check", "--seconds", str(seconds), "--interval", "5", stdout=out)
    return out.getvalue()


def test_readings_within_the_tolerance_of_the_brokers_rate_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    flow = _flow("ok")
    out = _measured(monkeypatch, flow, [18.0, 20.0, 22.0], gained=300, seconds=15)

    assert f"{flow.name}: brokers 20.0 records/s" in out
    assert "worst deviation 10.0% OK" in out


def test_a_reading_off_the_brokers_rate_fails_the_command(monkeypatch: pytest.MonkeyPatch) -> None:
    flow = _flow("off")
    with pytest.raises(CommandError, match="off the brokers' rate") as raised:
        _measured(monkeypatch, flow, [20.0, 41.0, 20.0], gained=300, seconds=15)
    assert raised.value.returncode == 1


def test_a_target_that_gained_nothing_is_no_data_not_a_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    flow = _flow("idle")
    with pytest.raises(CommandError, match="no data"):
        _measured(monkeypatch, flow, [0.0, 0.0, 0.0], gained=0, seconds=15)


def test_an_unknown_flow_name_is_a_cli_error() -> None:
    _flow("named")
    with pytest.raises(CommandError, match="--flow: no enabled flow is named a->b"):
        call_command("rate_check", "--flow", "a->b")
