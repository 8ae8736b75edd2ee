"""A flow's chart history: the last N minutes or a chosen since-until window, every sample up to 720 points, merged
per bucket beyond (rates averaged, lag and p99 at their peak), and a 400 naming the field for a bad window."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from controlplane.monitoring.models import FlowSample
from controlplane.monitoring.services import sampling

pytestmark = pytest.mark.django_db
Api = Callable[[str | None], APIClient]


@pytest.fixture
def flow() -> Flow:
    source, target = (Cluster.objects.create(alias=a, bootstrap_servers=f"{a}:9092") for a in ("east", "west"))
    return Flow.objects.create(source=source, target=target, topics=["orders"])


def take(flow: Flow, at: datetime, rate: float, lag: int, p99: float | None = None) -> None:
    FlowSample.objects.create(
        flow=flow, at=at, records=int(rate), records_per_second=rate, lag=lag, latency_p99_ms=p99, health="healthy"
    )


def test_the_last_minutes_answer_every_sample_in_them(api: Api, flow: Flow) -> None:
    now = timezone.now()
    for minutes_ago in (40, 20, 10, 1):
        take(flow, now - timedelta(minutes=minutes_ago), rate=minutes_ago, lag=minutes_ago)
    body = api("viewer").get(f"/api/v1/flows/{flow.pk}/history/?minutes=30").json()
    assert [s["lag"] for s in body["samples"]] == [20, 10, 1]
    assert (body["minutes"], body["bucket_seconds"]) == (30, 0)


def test_a_since_until_window_answers_only_the_samples_inside_it(api: Api, flow: Flow) -> None:
    start = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
    for minute in range(10):
        take(flow, start + timedelta(minutes=minute), rate=minute, lag=minute)
    query = "since=2026-11-29T10:02:00Z&until=2026-11-29T10:05:00Z"
    body = api("viewer").get(f"/api/v1/flows/{flow.pk}/history/?{query}").json()
    assert [s["lag"] for s in body["samples"]] == [2, 3, 4, 5]
    assert body["minutes"] is None and body["since"].startswith("2026-11-29T10:02:00")


def test_a_long_window_is_merged_into_buckets_keeping_each_peak() -> None:
    source, target = (Cluster.objects.create(alias=a, bootstrap_servers=f"{a}:9092") for a in ("a", "b"))
    flow = Flow.objects.create(source=source, target=target, topics=["t"])
    start = datetime(2026, 11, 29, 0, 0, tzinfo=UTC)
    # 2,000 samples a second apart; the 1,001st has the one lag peak and the one p99 of the window.
    FlowSample.objects.bulk_create(
        FlowSample(
            flow=flow,
            at=start + timedelta(seconds=n),
            records=n,
            records_per_second=10.0 if n % 2 else 20.0,
            lag=5_000 if n == 1000 else 3,
            latency_p99_ms=77.0 if n == 1000 else None,
            health="healthy",
        )
        for n in range(2000)
    )
    found = sampling.history(flow, start, start + timedelta(seconds=2000), points=100)
    assert found.bucket_seconds == 20 and len(found.samples) == 100
    assert {s["records_per_second"] for s in found.samples} == {15.0}
    assert [s["lag"] for s in found.samples].count(5_000) == 1 and max(s["lag"] for s in found.samples) == 5_000
    assert [s["latency_p99_ms"] for s in found.samples if s["latency_p99_ms"] is not None] == [77.0]
    assert found.samples[-1]["records"] == 1999  # the count as the last bucket ended


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("minutes=0", "minutes"),
        ("minutes=1441", "minutes"),
        ("since=2026-11-29T10:00:00Z", "until"),
        ("since=yesterday&until=2026-11-29T10:00:00Z", "since"),
        ("since=2026-11-29T10:00:00Z&until=2026-11-29T09:00:00Z", "until"),
        ("since=2026-11-27T10:00:00Z&until=2026-11-29T10:00:00Z", "until"),
        ("minutes=5&since=2026-11-29T10:00:00Z&until=2026-11-29T11:00:00Z", "minutes"),
        ("window=5", "window"),
    ],
)
def test_a_bad_window_is_a_400_naming_the_field(api: Api, flow: Flow, query: str, field: str) -> None:
    answer = api("viewer").get(f"/api/v1/flows/{flow.pk}/history/?{query}")
    assert answer.status_code == 400 and field in answer.json(), answer.content
