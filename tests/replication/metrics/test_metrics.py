from __future__ import annotations

import json
import threading

import pytest

from replication.metrics.distribution import Distribution
from replication.metrics.registry import REGISTRY, MetricsRegistry


class FakeClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def registry(clock: FakeClock) -> MetricsRegistry:
    return MetricsRegistry(clock=clock, wall_clock=lambda: 1700000000.0)


def partition(registry: MetricsRegistry, flow: str = "f", key: str = "orders-0") -> dict[str, object]:
    result: dict[str, object] = registry.snapshot()["flows"][flow]["partitions"][key]
    return result


def test_counts_and_bytes_add_up_per_partition(registry: MetricsRegistry) -> None:
    registry.record_batch("f", "orders", 0, 10, 1000, 5.0, 50.0)
    registry.record_batch("f", "orders", 0, 3, 300, 7.0, 70.0)
    registry.record_batch("f", "orders", 1, 1, 10, 1.0, 1.0)
    assert partition(registry)["record-count"] == 13
    assert partition(registry)["byte-count"] == 1300
    assert partition(registry, key="orders-1")["record-count"] == 1


def test_a_batch_is_one_sample_weighted_by_its_record_count(registry: MetricsRegistry) -> None:
    registry.record_batch("f", "orders", 0, 3, 0, 10.0, 100.0)
    registry.record_batch("f", "orders", 0, 1, 0, 50.0, 500.0)
    latency = partition(registry)["replication-latency-ms"]
    assert latency == {
        "min": 10.0,
        "max": 50.0,
        "avg": 20.0,  # (3*10 + 1*50) / 4
        "p50": 10.0,
        "p95": 50.0,
        "p99": 50.0,
        "sum": 80.0,
        "count": 4,
    }
    assert partition(registry)["record-age-ms"] == {k: v * 10 if k != "count" else v for k, v in latency.items()}


def test_percentiles_are_the_weighted_nearest_rank() -> None:
    distribution = Distribution()
    for value in range(1, 101):  # 1..100 ms, each one record, out of order
        distribution.add(0.0, float((value * 37) % 100 + 1), 1)
    stats = distribution.stats(0.0)
    assert (stats["p50"], stats["p95"], stats["p99"]) == (50.0, 95.0, 99.0)
    assert (stats["min"], stats["max"], stats["avg"]) == (1.0, 100.0, 50.5)


def test_percentile_boundaries_are_exact_with_weights() -> None:
    distribution = Distribution()
    distribution.add(0.0, 1.0, 50)  # exactly half the weight: p50 is still this value
    distribution.add(0.0, 2.0, 45)  # cumulative 95: p95 lands here
    distribution.add(0.0, 3.0, 4)  # cumulative 99
    distribution.add(0.0, 4.0, 1)
    stats = distribution.stats(0.0)
    assert (stats["p50"], stats["p95"], stats["p99"], stats["max"]) == (1.0, 2.0, 3.0, 4.0)


def test_samples_older_than_the_window_are_evicted_but_totals_stay(clock: FakeClock) -> None:
    registry = MetricsRegistry(clock=clock, window_seconds=60.0)
    registry.record_batch("f", "orders", 0, 1, 0, 900.0, 1.0)
    clock.now += 30
    registry.record_batch("f", "orders", 0, 1, 0, 10.0, 1.0)
    assert partition(registry)["replication-latency-ms"]["max"] == 900.0  # type: ignore[index]
    clock.now += 30  # the first sample is now exactly 60 s old: out
    latency = partition(registry)["replication-latency-ms"]
    assert (latency["max"], latency["p99"], latency["count"], latency["sum"]) == (10.0, 10.0, 2, 910.0)  # type: ignore[index]
    clock.now += 30
    idle = partition(registry)["replication-latency-ms"]
    assert idle == {
        "min": None,
        "max": None,
        "avg": None,
        "p50": None,
        "p95": None,
        "p99": None,
        "sum": 910.0,
        "count": 2,
    }
    assert partition(registry)["record-count"] == 2


def test_the_window_never_holds_more_than_its_sample_bound() -> None:
    distribution = Distribution(window_seconds=3600.0, max_samples=3)
    for value in (100.0, 1.0, 2.0, 3.0):
        distribution.add(0.0, value, 1)
    stats = distribution.stats(0.0)
    assert (stats["min"], stats["max"], stats["count"]) == (1.0, 3.0, 4)


def test_empty_batches_count_bytes_but_add_no_sample(registry: MetricsRegistry) -> None:
    registry.record_batch("f", "orders", 0, 0, 0, 999.0, 999.0)
    assert partition(registry)["replication-latency-ms"]["max"] is None  # type: ignore[index]


def test_lag_and_position_are_gauges_that_keep_the_last_value(registry: MetricsRegistry) -> None:
    assert "orders-0" not in registry.snapshot()["flows"].get("f", {}).get("partitions", {})
    registry.set_lag("f", "orders", 0, 500)
    registry.set_lag("f", "orders", 0, 20)
    registry.set_position("f", "orders", 0, 1480)
    assert partition(registry)["replication-record-lag"] == 20
    assert partition(registry)["position"] == 1480
    assert partition(registry, key="orders-0")["record-count"] == 0


def test_lost_records_accumulate_and_keep_the_last_reason(registry: MetricsRegistry) -> None:
    registry.add_lost_records("f", "orders", 0, 100, "retention: offsets 0-99 deleted before replication")
    registry.add_lost_records("f", "orders", 0, 7, "topic recreated")
    assert partition(registry)["record-lost-count"] == 107
    assert partition(registry)["last-loss-reason"] == "topic recreated"


def test_resumes_count_skipped_records_and_keep_the_last_mismatch(registry: MetricsRegistry) -> None:
    registry.add_resume("f", "orders", 0, 120, None)
    registry.add_resume("f", "orders", 0, 3, "offset 7: its value differs")
    entry = partition(registry)
    assert (entry["resume-skipped-count"], entry["resume-mismatch-count"]) == (123, 1)
    assert entry["last-resume-mismatch"] == "offset 7: its value differs"


def test_task_state_and_faults(registry: MetricsRegistry) -> None:
    registry.set_task_state("f", 0, "RUNNING")
    registry.report_fault("f", 0, "consumer: broker unreachable")
    registry.report_fault("f", 0, "consumer: still unreachable")
    registry.set_task_state("f", 1, "FAILED", "boom")
    tasks = registry.snapshot()["flows"]["f"]["tasks"]
    assert tasks == {
        "0": {
            "state": "RUNNING",
            "error": None,
            "fault": "consumer: still unreachable",
            "fault-since": 1700000000.0,
            "warning": None,
        },
        "1": {"state": "FAILED", "error": "boom", "fault": None, "fault-since": None, "warning": None},
    }
    registry.clear_fault("f", 0)
    assert registry.snapshot()["flows"]["f"]["tasks"]["0"]["fault"] is None


def test_snapshot_shape_is_json_serialisable(registry: MetricsRegistry) -> None:
    registry.set_task_state("f", 0, "RUNNING")
    registry.record_batch("f", "us.orders-v2", 12, 2, 20, 1.5, 2.5)
    snapshot = json.loads(json.dumps(registry.snapshot()))
    assert list(snapshot) == ["flows"]
    assert sorted(snapshot["flows"]["f"]) == ["partitions", "tasks"]
    entry = snapshot["flows"]["f"]["partitions"]["us.orders-v2-12"]
    assert sorted(entry) == sorted(
        [
            "topic",
            "partition",
            "record-count",
            "byte-count",
            "replication-latency-ms",
            "record-age-ms",
            "replication-record-lag",
            "position",
            "record-lost-count",
            "last-loss-reason",
            "resume-skipped-count",
            "resume-mismatch-count",
            "last-resume-mismatch",
        ]
    )
    assert (entry["topic"], entry["partition"]) == ("us.orders-v2", 12)
    assert sorted(entry["record-age-ms"]) == ["avg", "count", "max", "min", "p50", "p95", "p99", "sum"]


def test_prometheus_text_for_a_known_input(registry: MetricsRegistry) -> None:
    registry.record_batch("f", "orders", 0, 3, 300, 10.0, 100.0)
    registry.record_batch("f", "orders", 0, 1, 100, 50.0, 500.0)
    registry.set_lag("f", "orders", 0, 7)
    registry.add_lost_records("f", "orders", 0, 2, "topic recreated")
    registry.set_task_state("f", 0, "RUNNING")
    registry.set_task_state("f", 1, "FAILED", "boom")
    registry.report_fault("f", 0, "broker unreachable")
    labels = 'flow="f",topic="orders",partition="0"'
    assert registry.prometheus_text().splitlines() == [
        "# HELP mirrorplane_record_count_total Records replicated.",
        "# TYPE mirrorplane_record_count_total counter",
        f"mirrorplane_record_count_total{{{labels}}} 4",
        "# HELP mirrorplane_byte_count_total Bytes replicated.",
        "# TYPE mirrorplane_byte_count_total counter",
        f"mirrorplane_byte_count_total{{{labels}}} 400",
        "# HELP mirrorplane_replication_latency_ms Source record timestamp to target ack, ms, "
        "quantiles over a sliding window.",
        "# TYPE mirrorplane_replication_latency_ms summary",
        f'mirrorplane_replication_latency_ms{{{labels},quantile="0.5"}} 10.0',
        f'mirrorplane_replication_latency_ms{{{labels},quantile="0.95"}} 50.0',
        f'mirrorplane_replication_latency_ms{{{labels},quantile="0.99"}} 50.0',
        f"mirrorplane_replication_latency_ms_sum{{{labels}}} 80.0",
        f"mirrorplane_replication_latency_ms_count{{{labels}}} 4",
        "# HELP mirrorplane_replication_latency_ms_max Source record timestamp to target ack, ms, "
        "maximum over a sliding window.",
        "# TYPE mirrorplane_replication_latency_ms_max gauge",
        f"mirrorplane_replication_latency_ms_max{{{labels}}} 50.0",
        "# HELP mirrorplane_record_age_ms Age of a record when the task consumed it, ms, "
        "quantiles over a sliding window.",
        "# TYPE mirrorplane_record_age_ms summary",
        f'mirrorplane_record_age_ms{{{labels},quantile="0.5"}} 100.0',
        f'mirrorplane_record_age_ms{{{labels},quantile="0.95"}} 500.0',
        f'mirrorplane_record_age_ms{{{labels},quantile="0.99"}} 500.0',
        f"mirrorplane_record_age_ms_sum{{{labels}}} 800.0",
        f"mirrorplane_record_age_ms_count{{{labels}}} 4",
        "# HELP mirrorplane_record_age_ms_max Age of a record when the task consumed it, ms, "
        "maximum over a sliding window.",
        "# TYPE mirrorplane_record_age_ms_max gauge",
        f"mirrorplane_record_age_ms_max{{{labels}}} 500.0",
        "# HELP mirrorplane_replication_record_lag Records in the source not yet replicated "
        "(end offset minus replicated position).",
        "# TYPE mirrorplane_replication_record_lag gauge",
        f"mirrorplane_replication_record_lag{{{labels}}} 7",
        "# HELP mirrorplane_record_lost_count_total Records that can no longer be replicated "
        "(retention gap, topic recreated).",
        "# TYPE mirrorplane_record_lost_count_total counter",
        f"mirrorplane_record_lost_count_total{{{labels}}} 2",
        "# HELP mirrorplane_resume_skipped_count_total Records a restart found already written at the target and "
        "did not write again.",
        "# TYPE mirrorplane_resume_skipped_count_total counter",
        f"mirrorplane_resume_skipped_count_total{{{labels}}} 0",
        "# HELP mirrorplane_resume_mismatch_count_total Restarts that could not verify the target's records and "
        "copied them again (duplicates possible).",
        "# TYPE mirrorplane_resume_mismatch_count_total counter",
        f"mirrorplane_resume_mismatch_count_total{{{labels}}} 0",
        "# HELP mirrorplane_task_up 1 if the task is RUNNING.",
        "# TYPE mirrorplane_task_up gauge",
        'mirrorplane_task_up{flow="f",task="0"} 1',
        'mirrorplane_task_up{flow="f",task="1"} 0',
        "# HELP mirrorplane_task_faulted 1 while the task reports a lasting fault.",
        "# TYPE mirrorplane_task_faulted gauge",
        'mirrorplane_task_faulted{flow="f",task="0"} 1',
        'mirrorplane_task_faulted{flow="f",task="1"} 0',
    ]
    assert registry.prometheus_text().endswith("\n")


def test_prometheus_shows_nan_for_an_idle_window_and_omits_unset_lag(registry: MetricsRegistry) -> None:
    registry.set_position("f", "orders", 0, 5)
    text = registry.prometheus_text()
    assert 'mirrorplane_replication_latency_ms{flow="f",topic="orders",partition="0",quantile="0.5"} NaN' in text
    assert 'mirrorplane_record_age_ms_max{flow="f",topic="orders",partition="0"} NaN' in text
    assert 'mirrorplane_record_age_ms_count{flow="f",topic="orders",partition="0"} 0' in text
    assert "mirrorplane_replication_record_lag{" not in text


def test_prometheus_label_values_are_escaped(registry: MetricsRegistry) -> None:
    registry.record_batch('a\\b"c\nd', "orders", 0, 1, 1, 1.0, 1.0)
    line = next(line for line in registry.prometheus_text().splitlines() if line.startswith("mirrorplane_byte"))
    assert line == 'mirrorplane_byte_count_total{flow="a\\\\b\\"c\\nd",topic="orders",partition="0"} 1'


def test_prometheus_text_with_no_flows_is_only_help_and_type(registry: MetricsRegistry) -> None:
    lines = registry.prometheus_text().splitlines()
    assert lines and all(line.startswith(("# HELP ", "# TYPE ")) for line in lines)


def test_concurrent_batches_from_several_threads_add_up_exactly() -> None:
    registry = MetricsRegistry()
    threads_n, batches, start = 8, 2000, threading.Barrier(8)

    def work(task: int) -> None:
        start.wait()
        for i in range(batches):
            registry.record_batch("f", "orders", i % 2, 3, 100, 1.0, 2.0)
            registry.add_lost_records("f", "orders", 0, 1, f"task {task}")
            registry.set_lag("f", "orders", 1, i)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(threads_n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    partitions = registry.snapshot()["flows"]["f"]["partitions"]
    assert partitions["orders-0"]["record-count"] + partitions["orders-1"]["record-count"] == threads_n * batches * 3
    assert partitions["orders-0"]["byte-count"] == threads_n * batches // 2 * 100
    assert partitions["orders-0"]["record-lost-count"] == threads_n * batches
    assert partitions["orders-1"]["replication-latency-ms"]["count"] == threads_n * batches // 2 * 3


def test_the_default_registry_is_a_metrics_registry() -> None:
    assert isinstance(REGISTRY, MetricsRegistry)


def test_an_idle_flows_snapshot_is_handed_out_again_until_anything_of_it_changes(
    registry: MetricsRegistry, clock: FakeClock
) -> None:
    """A lease renewal reports the flow's snapshot every 5 s: an idle flow's is the same object until a writer
    touches it, so the reporter skips its 2,500 partitions; a flow with samples in a window is rebuilt each time."""

    def flow() -> object:
        return registry.snapshot()["flows"]["f"]

    registry.set_task_state("f", 0, "RUNNING")
    registry.set_position("f", "orders", 0, 5)
    registry.set_position("f", "orders", 1, 7)
    idle = flow()
    assert flow() is idle
    for change in (
        lambda: registry.set_lag("f", "orders", 1, 3),
        lambda: registry.set_task_state("f", 0, "RUNNING", "boom"),
        lambda: registry.report_fault("f", 0, "broker down"),
        lambda: registry.set_warning("f", 0, "no topic matches"),
        lambda: registry.clear_fault("f", 0),
        lambda: registry.add_lost_records("f", "orders", 0, 1, "gap"),
        lambda: registry.add_resume("f", "orders", 0, 1, None),
        lambda: registry.set_position("f", "orders", 2, 0),  # a new partition
    ):
        before = flow()
        change()
        after = flow()
        assert after is not before
        assert flow() is after  # idle again: kept

    registry.record_batch("f", "orders", 0, 2, 20, 3.0, 4.0)
    busy = flow()
    assert flow() is not busy, "a window with samples changes as they age out: not kept"
    clock.now += 61
    emptied = flow()
    assert emptied["partitions"]["orders-0"]["replication-latency-ms"]["max"] is None  # type: ignore[index]
    assert flow() is emptied


def test_an_idle_partitions_snapshot_is_not_rebuilt_until_it_changes(
    registry: MetricsRegistry, clock: FakeClock
) -> None:
    """An idle task of 2,500 partitions snapshots them all at every lease renewal: an unchanged one is reused, and
    every change, or a batch's samples leaving the window, shows in the next snapshot."""
    registry.set_position("f", "orders", 0, 5)
    first = partition(registry)
    assert partition(registry) is first
    registry.set_lag("f", "orders", 0, 0)
    assert partition(registry) is not first and partition(registry)["replication-record-lag"] == 0
    idle = partition(registry)
    registry.set_lag("f", "orders", 0, 0)  # swept again, unchanged
    registry.set_position("f", "orders", 0, 5)
    assert partition(registry) is idle

    registry.record_batch("f", "orders", 0, 2, 20, 3.0, 4.0)
    busy = partition(registry)
    assert busy["record-count"] == 2 and busy["replication-latency-ms"]["max"] == 3.0  # type: ignore[index]
    assert partition(registry) is not busy, "a window with samples changes as they age out: not kept"
    clock.now += 61
    emptied = partition(registry)
    assert emptied["replication-latency-ms"]["max"] is None and emptied["record-count"] == 2  # type: ignore[index]
    assert partition(registry) is emptied
    for change in (
        lambda: registry.add_lost_records("f", "orders", 0, 1, "gap"),
        lambda: registry.add_resume("f", "orders", 0, 1, None),
        lambda: registry.set_position("f", "orders", 0, 6),
        lambda: registry.record_batch("f", "orders", 0, 0, 10, 0.0, 0.0),
    ):
        before = partition(registry)
        change()
        assert partition(registry) is not before and partition(registry) != before
