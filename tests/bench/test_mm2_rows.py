"""The bench's replicator rows by Kafka version, and the MirrorMaker 2 properties each row runs with."""

from __future__ import annotations

from bench.compare import default_replicators
from bench.mm2props import mm2_bench_properties
from bench.replicators import REPLICATORS, MirrorMaker2


def test_mirrormaker_1_leads_only_on_kafka_2_3_0() -> None:
    assert default_replicators("replicators", "4.3.1") == ["mm2", "mp-alo", "mm2-eos", "mp-eos", "loop"]
    assert default_replicators("replicators", "2.3.0")[:2] == ["mm", "mm2"]
    assert "mm" not in default_replicators("kill_replicators", "4.3.1")
    assert default_replicators("kill_replicators", "4.3.1") == ["mm2", "mp-alo", "mm2-eos", "mp-eos"]


def test_rows_are_named_by_replicator() -> None:
    assert REPLICATORS["mm2"]().name == "mm2"
    assert REPLICATORS["mm2-eos"]().name == "mm2-eos"
    assert REPLICATORS["mp-alo"]().name == "mp-alo"
    assert REPLICATORS["mp-eos"]().name == "mp-eos"
    assert MirrorMaker2(tasks=4).name == "mm2-4t"


def _props(**kwargs: bool) -> dict[str, str]:
    return mm2_bench_properties("src-1", "h:1", "dst", "h:2", "bench-t", 2, **kwargs)


def test_mm2_copies_the_one_topic_with_the_same_tasks_max_as_mirrorplane() -> None:
    props = _props()
    assert props["clusters"] == "src-1, dst"
    assert props["src-1->dst.enabled"] == "true"
    assert props["src-1->dst.topics"] == "bench-t"
    assert props["tasks.max"] == "2"
    assert "dst.exactly.once.source.support" not in props


def test_throughput_tuning_goes_to_the_target_producer_and_the_source_consumer() -> None:
    props = _props()
    assert props["dst.producer.batch.size"] == "327680"
    assert props["dst.producer.linger.ms"] == "100"
    assert props["src-1.consumer.max.poll.records"] == "2000"
    assert props["dst.offset.flush.timeout.ms"] == "10000"
    assert props["dst.scheduled.rebalance.max.delay.ms"] == "0"


def test_latency_runs_keep_kafkas_default_batching() -> None:
    props = _props(latency=True)
    assert not any(".producer." in key or ".consumer." in key for key in props)
    assert props["dst.offset.flush.interval.ms"] == "60000"


def test_exactly_once_is_enabled_on_the_target_cluster() -> None:
    assert _props(exactly_once=True)["dst.exactly.once.source.support"] == "enabled"
