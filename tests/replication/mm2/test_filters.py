from __future__ import annotations

import pytest

from replication.config import ClusterConfig, ConfigError, FlowConfig
from replication.metrics.registry import MetricsRegistry
from replication.mm2 import filters
from replication.mm2.filters import GroupFilter, TopicFilter, nothing_matched
from replication.mm2.policy import ReplicationPolicy, is_cycle
from replication.task.faults import FaultReporter


def flow(**changes: object) -> FlowConfig:
    west = ClusterConfig("us-west", {"bootstrap.servers": "west:9092"})
    east = ClusterConfig("us-east", {"bootstrap.servers": "east:9092"})
    return FlowConfig(source=west, target=east).replace(**changes)


@pytest.mark.parametrize("topic", ["__consumer_offsets", "x.internal", "foo-internal", "a.replica", ".hidden"])
def test_internal_and_replica_topics_are_not_replicated_by_default(topic: str) -> None:
    assert not TopicFilter(flow()).should_replicate(topic)


@pytest.mark.parametrize("topic", ["orders", "us-central.orders", "x.internalish"])
def test_ordinary_and_remote_topics_are_replicated_by_default(topic: str) -> None:
    assert TopicFilter(flow()).should_replicate(topic)


@pytest.mark.parametrize("topic", ["heartbeats", "us-central.heartbeats", "backup.us-central.heartbeats"])
def test_heartbeats_pass_even_when_topics_and_excludes_say_otherwise(topic: str) -> None:
    topic_filter = TopicFilter(flow(topics=("orders",), topics_exclude=(".*heartbeats",)))
    assert topic_filter.should_replicate(topic)
    assert not topic_filter.should_replicate("payments")


def test_a_topic_is_never_sent_back_to_a_cluster_it_came_from() -> None:
    topic_filter = TopicFilter(flow())
    assert not topic_filter.should_replicate("us-east.orders")
    assert not topic_filter.should_replicate("backup.us-east.orders")
    assert not topic_filter.should_replicate("us-east.heartbeats")
    assert topic_filter.should_replicate("us-central.orders")


def test_cycles_follow_the_flow_separator() -> None:
    topic_filter = TopicFilter(flow(replication_policy_separator="_"))
    assert not topic_filter.should_replicate("us-east_orders")
    assert topic_filter.should_replicate("us-east.orders")


def test_identity_policy_cannot_see_cycles_in_names_but_keeps_the_filters() -> None:
    topic_filter = TopicFilter(flow(replication_policy_class="IdentityReplicationPolicy"))
    assert topic_filter.should_replicate("orders")
    assert not topic_filter.should_replicate("us-east.heartbeats")
    assert not topic_filter.should_replicate("__consumer_offsets")


def test_topic_patterns_must_match_the_whole_name() -> None:
    topic_filter = TopicFilter(flow(topics=("ord", "pay.*"), topics_exclude=("payments-old",)))
    assert topic_filter.should_replicate("ord")
    assert not topic_filter.should_replicate("orders")
    assert not topic_filter.should_replicate("xord")
    assert topic_filter.should_replicate("payments")
    assert topic_filter.should_replicate("payments-old-archive")
    assert not topic_filter.should_replicate("payments-old")


def test_exclude_wins_over_include() -> None:
    topic_filter = TopicFilter(flow(topics=("orders.*",), topics_exclude=("orders-test",)))
    assert topic_filter.should_replicate("orders-prod")
    assert not topic_filter.should_replicate("orders-test")


def test_empty_topic_list_replicates_only_heartbeats() -> None:
    topic_filter = TopicFilter(flow(topics=()))
    assert not topic_filter.should_replicate("orders")
    assert topic_filter.should_replicate("heartbeats")


def test_each_topic_is_judged_once(monkeypatch: pytest.MonkeyPatch) -> None:
    judged: list[str] = []

    def counting_is_cycle(policy: ReplicationPolicy, topic: str, target_alias: str) -> bool:
        judged.append(topic)
        return is_cycle(policy, topic, target_alias)

    monkeypatch.setattr(filters, "is_cycle", counting_is_cycle)
    topic_filter = TopicFilter(flow(topics=("orders",)))
    for _ in range(3):
        assert topic_filter.should_replicate("orders")
        assert not topic_filter.should_replicate("payments")
    assert judged == ["orders", "payments"]


def test_an_invalid_pattern_names_its_property() -> None:
    bad = flow()
    object.__setattr__(bad, "topics_exclude", ("[",))  # FlowConfig itself refuses this; the filter must too
    with pytest.raises(ConfigError) as error:
        TopicFilter(bad)
    assert error.value.property_name == "topics.exclude"


@pytest.mark.parametrize("group", ["console-consumer-1", "connect-mirror", "__consumer_offsets"])
def test_console_connect_and_internal_groups_are_not_replicated_by_default(group: str) -> None:
    assert not GroupFilter(flow()).should_replicate(group)


def test_group_patterns_must_match_the_whole_name_and_exclude_wins() -> None:
    group_filter = GroupFilter(flow(groups=("billing", "orders-.*"), groups_exclude=("orders-test",)))
    assert group_filter.should_replicate("billing")
    assert not group_filter.should_replicate("billing-2")
    assert group_filter.should_replicate("orders-prod")
    assert not group_filter.should_replicate("orders-test")
    assert GroupFilter(flow()).should_replicate("checkout-service")


def test_a_filter_that_selects_nothing_but_heartbeats_is_a_warning_naming_the_patterns() -> None:
    config = flow(topics=("orders-d+",))
    warning = nothing_matched(config, ["heartbeats", "us-east.heartbeats"], 7)
    assert warning is not None and "orders-d+" in warning and "none of the 7 topics" in warning
    assert "backslash twice" in warning
    assert nothing_matched(config, ["heartbeats", "orders-7"], 7) is None


def test_a_warning_is_not_a_fault_and_lifts_when_it_no_longer_holds() -> None:
    metrics = MetricsRegistry()
    faults = FaultReporter(flow(), 0, metrics)
    faults.warn("the topics filter matches no source topic: ...")
    faults.report("source: broker down")
    faults.clear()  # records flowing clear faults, not the warning
    task = metrics.snapshot()["flows"][flow().name]["tasks"]["0"]
    assert (task["fault"], task["warning"]) == (None, "the topics filter matches no source topic: ...")
    faults.warn(None)
    assert metrics.snapshot()["flows"][flow().name]["tasks"]["0"]["warning"] is None
