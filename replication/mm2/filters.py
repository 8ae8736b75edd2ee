"""Which topics and consumer groups a flow replicates, with MM2's rules (topic filter, internal topics, cycles).

Both filters are asked about every topic or group on every refresh, so the patterns are compiled once and
each name's decision is remembered: a flow's config is frozen, so a decision never changes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Protocol

from replication.mm2.policy import ReplicationPolicy, is_cycle, is_heartbeats_topic, is_internal_topic
from replication.mm2.properties import ConfigError


class _Cluster(Protocol):
    @property
    def alias(self) -> str: ...


class FilterConfig(Protocol):
    """What the filters read of a flow's config, by MM2's property names (``topics``, ``topics.exclude``, ...):
    FlowConfig is one. The filters are MM2's vocabulary and know no more of the runtime's config than this."""

    @property
    def source(self) -> _Cluster: ...
    @property
    def target(self) -> _Cluster: ...
    @property
    def topics(self) -> tuple[str, ...]: ...
    @property
    def topics_exclude(self) -> tuple[str, ...]: ...
    @property
    def groups(self) -> tuple[str, ...]: ...
    @property
    def groups_exclude(self) -> tuple[str, ...]: ...
    def policy(self) -> ReplicationPolicy: ...


def compile_patterns(name: str, patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One anchored regex from MM2's comma-separated list; ConfigError names the property when one is invalid."""
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ConfigError(name, f"invalid regular expression {pattern!r}: {exc}") from None
    if not patterns:
        return re.compile(r"(?!)")  # matches nothing
    return re.compile("|".join(f"(?:{p})" for p in patterns))


class _Patterns:
    """An include and an exclude pattern list; a name must match the whole of some include pattern."""

    def __init__(self, name: str, include: tuple[str, ...], exclude: tuple[str, ...]) -> None:
        self._include: re.Pattern[str] = compile_patterns(name, include)
        self._exclude: re.Pattern[str] = compile_patterns(f"{name}.exclude", exclude)

    def matches(self, name: str) -> bool:
        return self._include.fullmatch(name) is not None and self._exclude.fullmatch(name) is None


class TopicFilter:
    """The source topics a flow replicates (MM2's `shouldReplicateTopic`)."""

    def __init__(self, flow: FilterConfig) -> None:
        self._patterns = _Patterns("topics", flow.topics, flow.topics_exclude)
        self._policy = flow.policy()
        self._target_alias = flow.target.alias
        self._decisions: dict[str, bool] = {}

    def should_replicate(self, topic: str) -> bool:
        decision = self._decisions.get(topic)
        if decision is None:
            decision = self._decisions[topic] = self._decide(topic)
        return decision

    def _decide(self, topic: str) -> bool:
        # A cycle is refused before anything else, heartbeats included: `us-east.heartbeats` must not go
        # back to us-east.
        if is_cycle(self._policy, topic, self._target_alias):
            return False
        # Heartbeats (local and remote) always flow, whatever `topics` says: they are how a downstream
        # cluster learns which upstream clusters it is connected to, hop by hop.
        if is_heartbeats_topic(self._policy, topic):
            return True
        return not is_internal_topic(topic) and self._patterns.matches(topic)


NOTHING_MATCHED = "the topics filter matches no source topic"


def nothing_matched(flow: FilterConfig, replicated: Iterable[str], listed: int) -> str | None:
    """A warning when the flow replicates no topic but heartbeats: a filter that silently matches nothing.

    A common cause is a properties file: Java properties rules turn `\\d` into `d`, so `orders-\\d+` arrives
    as `orders-d+` (replication.config.mm2properties reads files that way, as MM2 does), and a regex backslash must be
    written twice there.
    """
    policy = flow.policy()
    if any(not is_heartbeats_topic(policy, topic) for topic in replicated):
        return None
    patterns = ", ".join(flow.topics) or "(empty)"
    return (
        f"{NOTHING_MATCHED}: topics = {patterns} (and topics.exclude) select none of the {listed} topics on "
        f"{flow.source.alias} (heartbeats aside); check the patterns (in a properties file, write a regex "
        "backslash twice: \\\\d, because Java properties rules turn \\d into d)"
    )


class GroupFilter:
    """The consumer groups whose offsets a flow checkpoints (MM2's `shouldReplicateGroup`)."""

    def __init__(self, flow: FilterConfig) -> None:
        self._patterns = _Patterns("groups", flow.groups, flow.groups_exclude)
        self._decisions: dict[str, bool] = {}

    def should_replicate(self, group: str) -> bool:
        decision = self._decisions.get(group)
        if decision is None:
            decision = self._decisions[group] = self._patterns.matches(group)
        return decision
