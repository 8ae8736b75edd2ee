"""Replication policies: how remote topics are named and how a topic's origin is read back (MM2 semantics).

Pure string functions, shared by the data plane and the control plane's validation.
"""

from __future__ import annotations

import re
from typing import Protocol

HEARTBEATS_TOPIC = "heartbeats"
_LEGAL_TOPIC = re.compile(r"^[a-zA-Z0-9._-]+$")
MAX_ALIAS_LENGTH = 64


class PolicyError(ValueError):
    """A cluster alias, separator or topic name that a replication policy cannot work with."""


def validate_alias(alias: str, separator: str = ".") -> str:
    """Check that alias is usable as a remote-topic prefix; return it unchanged."""
    if not alias:
        raise PolicyError("alias: must not be empty")
    if len(alias) > MAX_ALIAS_LENGTH:
        raise PolicyError(f"alias: {len(alias)} characters; at most {MAX_ALIAS_LENGTH} are allowed")
    if not _LEGAL_TOPIC.match(alias):
        raise PolicyError(f"alias: {alias!r} may contain only letters, digits, '.', '_' and '-'")
    if separator and separator in alias:
        raise PolicyError(f"alias: {alias!r} contains the replication.policy.separator {separator!r}")
    return alias


def validate_separator(separator: str) -> str:
    if not separator or not _LEGAL_TOPIC.match(separator):
        raise PolicyError(f"replication.policy.separator: {separator!r} must be non-empty topic characters")
    return separator


class ReplicationPolicy(Protocol):
    """MM2's ReplicationPolicy, in Python naming."""

    separator: str

    def format_remote_topic(self, source_alias: str, topic: str) -> str: ...
    def topic_source(self, topic: str) -> str | None: ...
    def upstream_topic(self, topic: str) -> str | None: ...


class DefaultReplicationPolicy:
    """Remote topics are `{source alias}{separator}{topic}`; the prefix chain records every hop."""

    def __init__(self, separator: str = ".") -> None:
        self.separator = validate_separator(separator)

    def format_remote_topic(self, source_alias: str, topic: str) -> str:
        return f"{source_alias}{self.separator}{topic}"

    def topic_source(self, topic: str) -> str | None:
        head, sep, _ = topic.partition(self.separator)
        return head if sep and head else None

    def upstream_topic(self, topic: str) -> str | None:
        head, sep, tail = topic.partition(self.separator)
        return tail if sep and head else None


class IdentityReplicationPolicy(DefaultReplicationPolicy):
    """Legacy mode: remote topics keep their names (heartbeats excepted, as in MM2).

    Names carry no provenance, so cycles are caught by the provenance header instead (see `cycles`).
    """

    def __init__(self, source_alias: str | None = None, separator: str = ".") -> None:
        super().__init__(separator)
        self.source_alias = source_alias

    def format_remote_topic(self, source_alias: str, topic: str) -> str:
        if _looks_like_heartbeats(topic, self.separator):
            return super().format_remote_topic(source_alias, topic)
        return topic

    def topic_source(self, topic: str) -> str | None:
        if _looks_like_heartbeats(topic, self.separator):
            return super().topic_source(topic)
        return self.source_alias

    def upstream_topic(self, topic: str) -> str | None:
        if _looks_like_heartbeats(topic, self.separator):
            return super().upstream_topic(topic)
        return topic


# `replication.policy.class` values, short and fully qualified, and the policy each one names.
POLICIES = {
    "DefaultReplicationPolicy": "default",
    "org.apache.kafka.connect.mirror.DefaultReplicationPolicy": "default",
    "IdentityReplicationPolicy": "identity",
    "org.apache.kafka.connect.mirror.IdentityReplicationPolicy": "identity",
}


def replication_policy(policy_class: str, source_alias: str, separator: str) -> ReplicationPolicy:
    """The policy ``replication.policy.class`` names, for a flow out of ``source_alias``; a FlowConfig's ``policy()``,
    for a reader that has the flow's fields but not its whole config (the sampler, over every flow every tick)."""
    if POLICIES[policy_class] == "identity":
        return IdentityReplicationPolicy(source_alias, separator)
    return DefaultReplicationPolicy(separator)


def _looks_like_heartbeats(topic: str, separator: str) -> bool:
    return topic == HEARTBEATS_TOPIC or topic.endswith(separator + HEARTBEATS_TOPIC)


def original_topic(policy: ReplicationPolicy, topic: str) -> str:
    """Follow upstream names to the topic as it was first produced."""
    seen = 0
    while (upstream := policy.upstream_topic(topic)) is not None and upstream != topic and seen < 100:
        topic, seen = upstream, seen + 1
    return topic


def source_chain(policy: ReplicationPolicy, topic: str) -> list[str]:
    """Aliases a remote topic passed through, nearest first: `b.a.t` -> ['b', 'a']."""
    chain: list[str] = []
    while (source := policy.topic_source(topic)) is not None and len(chain) < 100:
        chain.append(source)
        upstream = policy.upstream_topic(topic)
        if upstream is None or upstream == topic:
            break
        topic = upstream
    return chain


def is_cycle(policy: ReplicationPolicy, topic: str, target_alias: str) -> bool:
    """True if replicating topic to target_alias would send it back where it already was (MM2's isCycle)."""
    return target_alias in source_chain(policy, topic)


def is_heartbeats_topic(policy: ReplicationPolicy, topic: str) -> bool:
    return original_topic(policy, topic) == HEARTBEATS_TOPIC


def is_internal_topic(topic: str) -> bool:
    """MM2's internal-topic test: Kafka internals, MM2 internals and hidden topics."""
    return topic.startswith(("__", ".")) or topic.endswith((".internal", "-internal"))


def checkpoints_topic(source_alias: str) -> str:
    return f"{source_alias}.checkpoints.internal"
