"""The dashboard's charts: all flows together over a window, each flow's mean rate and peak lag per bucket summed,
with the number of flows each point covers, and no point where no flow had a sample."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from rest_framework.test import APIClient

from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from controlplane.monitoring.models import FlowSample
from controlplane.monitoring.services import sampling

pytestmark = pytest.mark.django_db
Api = Callable[[str | None], APIClient]
START = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)


@pytest.fixture
def flows() -> list[Flow]:
    a, b, c = (Cluster.objects.create(alias=alias, bootstrap_servers=f"{alias}:9092") for alias in "abc")
    return [
        Flow.objects.create(source=a, target=b, topics=["orders"]),
        Flow.objects.create(source=b, target=c, topics=["a.orders"]),
    ]


def take(flow: Flow, seconds: float, rate: float | None, lag: int | None, entering: float | None = None) -> None:
    FlowSample.objects.create(
        flow=flow,
        at=START + timedelta(seconds=seconds),
        records=0,
        records_per_second=rate,
        entering_per_second=entering,
        lag=lag,
        health="healthy",
    )


def test_each_bucket_sums_the_flows_mean_rates_and_peak_lags(flows: list[Flow]) -> None:
    first, second = flows
    # 15 minutes at 5 s ticks: 180 points fit, so one bucket is one tick (5 s).
    take(first, 1, rate=100.0, lag=10, entering=100.0)
    take(second, 2, rate=40.0, lag=3)
    take(first, 6, rate=120.0, lag=30, entering=120.0)
    take(first, 8, rate=80.0, lag=20, entering=80.0)  # same bucket as 6 s: mean 100, peak lag 30
    found = sampling.total_history(START, START + timedelta(minutes=15))
    assert found.bucket_seconds == 5
    assert [(p["flows"], p["records_per_second"], p["entering_per_second"], p["lag"]) for p in found.samples] == [
        (2, 140.0, 100.0, 13),
        (1, 100.0, 100.0, 30),
    ]
    assert found.samples[0]["at"] == START + timedelta(seconds=2)


def test_a_sum_over_no_value_is_no_data_not_zero(flows: list[Flow]) -> None:
    take(flows[0], 1, rate=None, lag=None)
    [point] = sampling.total_history(START, START + timedelta(minutes=15)).samples
    assert (point["flows"], point["records_per_second"], point["lag"]) == (1, None, None)


def test_a_day_is_merged_per_minute_by_the_database_and_kept_within_720_points(flows: list[Flow]) -> None:
    first, second = flows
    FlowSample.objects.bulk_create(
        FlowSample(
            flow=flow, at=START + timedelta(seconds=s), records=0, records_per_second=rate, lag=s, health="healthy"
        )
        for s in range(0, 24 * 3600, 30)
        for flow, rate in ((first, 10.0), (second, 20.0))
    )
    found = sampling.total_history(START, START + timedelta(hours=24))
    assert found.bucket_seconds == 120
    assert len(found.samples) == 720
    assert all(p["flows"] == 2 and p["records_per_second"] == 30.0 for p in found.samples)
    # The bucket of minutes 2 and 3 (samples at 120 s to 210 s): each flow's peak is 210.
    assert found.samples[1]["lag"] == 420


def test_the_api_answers_a_window_and_names_a_bad_field(api: Api, flows: list[Flow]) -> None:
    take(flows[0], 60, rate=5.0, lag=1)
    body = api("viewer").get("/api/v1/dashboard/history/?since=2026-11-29T10:00:00Z&until=2026-11-29T10:15:00Z").json()
    assert (body["minutes"], body["bucket_seconds"], len(body["samples"])) == (None, 5, 1)
    assert body["samples"][0]["flows"] == 1
    assert api("viewer").get("/api/v1/dashboard/history/?minutes=30").json()["samples"] == []
    bad = api("viewer").get("/api/v1/dashboard/history/?minutes=30&flow=1")
    assert bad.status_code == 400 and bad.json()["flow"] == ["unknown parameter"]
    assert api(None).get("/api/v1/dashboard/history/").status_code in (401, 403)
