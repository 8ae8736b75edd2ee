"""Per-partition lag history: the sampler writes a bounded few rows per tick (watched partitions first, then each
flow's highest lag) and prunes past retention; the lag-history API answers with the samples or a 400 naming
the field."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient

from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from controlplane.monitoring.models import PartitionLagSample, PartitionLagWatch
from controlplane.monitoring.services import partition_lag
from controlplane.orchestration.models import PartitionReport, TaskAssignment

pytestmark = pytest.mark.django_db
Api = Callable[[str | None], APIClient]


def make_flow(source: str, target: str = "sink") -> Flow:
    clusters = [
        Cluster.objects.get_or_create(alias=a, defaults={"bootstrap_servers": f"{a}:9092"})[0] for a in (source, target)
    ]
    return Flow.objects.create(source=clusters[0], target=clusters[1], topics=["orders"])


def report(flow: Flow, lags: dict[tuple[str, int], int | None]) -> None:
    task = TaskAssignment.objects.get_or_create(flow=flow, task_id=0)[0]
    now = timezone.now()
    PartitionReport.objects.bulk_create(
        PartitionReport(flow=flow, assignment=task, topic=t, partition=p, lag=lag, updated_at=now)
        for (t, p), lag in lags.items()
    )


def sampled(at: object) -> set[tuple[int, str, int, int]]:
    return set(PartitionLagSample.objects.filter(at=at).values_list("flow_id", "topic", "partition", "lag"))


def test_a_tick_writes_each_flows_top_partitions_within_the_row_budget_in_one_insert() -> None:
    big = make_flow("big")
    report(big, {("orders", p): p for p in range(10_000)})  # lag = partition number: the top five are 9995..9999
    small = make_flow("small")
    report(small, {("payments", 0): 0, ("payments", 1): 7, ("payments", 2): None})
    others = [make_flow(f"src-{n}") for n in range(12)]
    for n, flow in enumerate(others):
        report(flow, {("t", p): 100 + n * 10 + p for p in range(6)})
    now = timezone.now()
    with CaptureQueriesContext(connection) as queries:
        written = partition_lag.sample_partition_lag(now)
    inserts = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("INSERT")]
    assert written == 50 and PartitionLagSample.objects.count() == 50 and len(inserts) == 1
    rows = sampled(now)
    assert {(t, p, lag) for f, t, p, lag in rows if f == big.pk} == {("orders", p, p) for p in range(9995, 10_000)}
    # at most five of each flow; the small flow's two reported partitions are below every other flow's lag
    per_flow = {f: sum(1 for row in rows if row[0] == f) for f in {row[0] for row in rows}}
    assert max(per_flow.values()) == 5 and small.pk not in per_flow
    lowest_kept = min(lag for f, _, _, lag in rows if f != big.pk)
    assert lowest_kept >= 100 + 10 * 3  # the budget went to the highest lags: flows 0..2 lost their place


def test_a_watched_partition_is_sampled_even_with_a_low_lag_and_a_made_up_one_is_not_watched() -> None:
    busy = make_flow("busy")
    report(busy, {("orders", p): 1_000 + p for p in range(60)})
    quiet = make_flow("quiet")
    report(quiet, {("orders", p): 0 for p in range(10)})
    now = timezone.now()
    assert partition_lag.watch(quiet, "orders", 7, now) == now + timedelta(seconds=partition_lag.WATCH_SECONDS)
    assert partition_lag.watch(quiet, "orders", 99, now) is None
    assert partition_lag.watch(quiet, "nope", 0, now) is None
    assert PartitionLagWatch.objects.count() == 1
    partition_lag.sample_partition_lag(now)
    rows = sampled(now)
    # five of each flow (the quiet one's ties go by partition: 0..4), and the watched partition 7 besides
    assert {(f, p) for f, _, p, _ in rows} == {(busy.pk, p) for p in range(55, 60)} | {
        (quiet.pk, p) for p in (0, 1, 2, 3, 4, 7)
    }


def test_samples_past_retention_and_expired_watches_are_pruned() -> None:
    flow = make_flow("src")
    report(flow, {("orders", 0): 5})
    now = timezone.now()
    old = now - timedelta(hours=partition_lag.RETENTION_HOURS, minutes=1)
    kept = now - timedelta(hours=partition_lag.RETENTION_HOURS - 1)
    for at in (old, kept):
        PartitionLagSample.objects.create(flow=flow, topic="orders", partition=0, at=at, lag=1)
    partition_lag.watch(flow, "orders", 0, now - timedelta(seconds=partition_lag.WATCH_SECONDS + 1))
    assert partition_lag.sample_partition_lag(now) == 1
    assert list(PartitionLagSample.objects.values_list("at", "lag")) == [(kept, 1), (now, 5)]
    assert not PartitionLagWatch.objects.exists()


def test_the_lag_history_api_answers_a_partitions_samples_and_watches_it(api: Api) -> None:
    flow = make_flow("src")
    report(flow, {("orders", 0): 3, ("orders", 1): 42})
    now = timezone.now()
    for minutes, lag in ((90, 1), (20, 10), (5, 40)):
        PartitionLagSample.objects.create(
            flow=flow, topic="orders", partition=1, at=now - timedelta(minutes=minutes), lag=lag
        )
    PartitionLagSample.objects.create(flow=flow, topic="orders", partition=0, at=now, lag=3)
    url = f"/api/v1/flows/{flow.pk}/partitions/lag-history/"
    body = api("viewer").get(url, {"topic": "orders", "partition": 1}).json()
    assert (body["flow"], body["topic"], body["partition"], body["minutes"], body["lag"]) == (
        flow.pk,
        "orders",
        1,
        30,
        42,
    )
    assert [s["lag"] for s in body["samples"]] == [10, 40]
    assert body["watched_until"] is not None
    assert PartitionLagWatch.objects.filter(flow=flow, topic="orders", partition=1).exists()
    longer = api("viewer").get(url, {"topic": "orders", "partition": 1, "minutes": 120}).json()
    assert [s["lag"] for s in longer["samples"]] == [1, 10, 40]
    unknown = api("viewer").get(url, {"topic": "orders", "partition": 9}).json()
    assert (unknown["samples"], unknown["lag"], unknown["watched_until"]) == ([], None, None)
    assert PartitionLagWatch.objects.count() == 1


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"partition": 0}, "topic"),
        ({"topic": "", "partition": 0}, "topic"),
        ({"topic": "x" * 256, "partition": 0}, "topic"),
        ({"topic": "orders"}, "partition"),
        ({"topic": "orders", "partition": "-1"}, "partition"),
        ({"topic": "orders", "partition": "1.5"}, "partition"),
        ({"topic": "orders", "partition": "99999999999"}, "partition"),
        ({"topic": "orders", "partition": 0, "minutes": 0}, "minutes"),
        ({"topic": "orders", "partition": 0, "minutes": partition_lag.RETENTION_HOURS * 60 + 1}, "minutes"),
        ({"topic": "orders", "partition": 0, "minutes": "soon"}, "minutes"),
    ],
)
def test_bad_lag_history_input_is_a_400_naming_the_field(api: Api, query: dict[str, object], field: str) -> None:
    flow = make_flow("src")
    response = api("viewer").get(f"/api/v1/flows/{flow.pk}/partitions/lag-history/", query)
    assert (response.status_code, list(response.json())) == (400, [field])


def test_the_lag_history_of_a_missing_flow_is_a_404(api: Api) -> None:
    assert api("viewer").get("/api/v1/flows/999999/partitions/lag-history/?topic=a&partition=0").status_code == 404


def test_a_watched_partition_keeps_its_place_when_the_budget_is_full() -> None:
    for n in range(12):
        report(make_flow(f"src-{n}"), {("t", p): 1_000 + p for p in range(6)})
    quiet = make_flow("quiet", "elsewhere")
    report(quiet, {("orders", 3): 0})
    now = timezone.now()
    partition_lag.watch(quiet, "orders", 3, now)
    assert partition_lag.sample_partition_lag(now) == partition_lag.MAX_ROWS
    assert (quiet.pk, "orders", 3, 0) in sampled(now)
