from __future__ import annotations

import pytest

from replication.mm2.policy import (
    DefaultReplicationPolicy,
    IdentityReplicationPolicy,
    PolicyError,
    checkpoints_topic,
    is_cycle,
    is_heartbeats_topic,
    is_internal_topic,
    original_topic,
    source_chain,
    validate_alias,
)


def test_default_policy_prefixes_the_source_alias() -> None:
    policy = DefaultReplicationPolicy()
    assert policy.format_remote_topic("us-west", "orders") == "us-west.orders"
    assert policy.topic_source("us-west.orders") == "us-west"
    assert policy.upstream_topic("us-west.orders") == "orders"
    assert policy.topic_source("orders") is None
    assert policy.upstream_topic("orders") is None


def test_custom_separator_is_used_both_ways() -> None:
    policy = DefaultReplicationPolicy(separator="_")
    assert policy.format_remote_topic("a", "t") == "a_t"
    assert source_chain(policy, "b_a_t") == ["b", "a"]
    assert original_topic(policy, "b_a_t") == "t"


def test_chain_and_cycles_follow_every_hop() -> None:
    policy = DefaultReplicationPolicy()
    assert source_chain(policy, "backup.us-west.orders") == ["backup", "us-west"]
    assert original_topic(policy, "backup.us-west.orders") == "orders"
    assert is_cycle(policy, "us-east.us-west.orders", "us-west")
    assert is_cycle(policy, "us-west.orders", "us-west")
    assert not is_cycle(policy, "us-west.orders", "backup")
    assert not is_cycle(policy, "orders", "us-west")


def test_identity_policy_keeps_names_but_not_for_heartbeats() -> None:
    policy = IdentityReplicationPolicy(source_alias="us-west")
    assert policy.format_remote_topic("us-west", "orders") == "orders"
    assert policy.format_remote_topic("us-west", "heartbeats") == "us-west.heartbeats"
    assert policy.topic_source("orders") == "us-west"
    assert not is_cycle(policy, "orders", "us-east")


def test_heartbeat_and_internal_topics_are_recognised() -> None:
    policy = DefaultReplicationPolicy()
    assert is_heartbeats_topic(policy, "heartbeats")
    assert is_heartbeats_topic(policy, "backup.us-west.heartbeats")
    assert not is_heartbeats_topic(policy, "us-west.orders")
    for topic in ("__consumer_offsets", "us-west.checkpoints.internal", "x-internal", ".hidden"):
        assert is_internal_topic(topic)
    assert not is_internal_topic("orders")
    assert checkpoints_topic("us-west") == "us-west.checkpoints.internal"


@pytest.mark.parametrize(
    ("alias", "reason"),
    [("", "empty"), ("us west", "letters"), ("a.b", "separator"), ("x" * 65, "at most 64"), ("é", "letters")],
)
def test_bad_aliases_are_refused_with_a_reason(alias: str, reason: str) -> None:
    with pytest.raises(PolicyError, match=reason):
        validate_alias(alias)


def test_good_alias_is_returned() -> None:
    assert validate_alias("us-west_2") == "us-west_2"
