"""TopicSync: remote topics mirror their source topic's partitions, configs and ACLs (MM2 semantics)."""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import Future
from typing import Any, TypeVar

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewPartitions,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)

from replication.config import FlowConfig, compile_patterns
from replication.errors import named_refusal
from replication.mm2.filters import TopicFilter
from replication.mm2.policy import is_heartbeats_topic

log = logging.getLogger(__name__)
TIMEOUT = 30.0
MAX_TOPIC_NAME = 249  # Kafka's limit
# A heartbeat's arrival in a cluster is the moment the broker appended it there: the latency and topology reports
# read it from the record's timestamp, so every heartbeats topic (the source's and each remote one) is stamped by
# its broker. With CreateTime a replicated heartbeat keeps its emitter's timestamp, and its arrival could only be
# the moment a collector read it, up to a collection period late.
STAMPED = "LogAppendTime"


class TopicSync:
    """Creates and grows remote topics, and copies topic configs and ACLs from source to target."""

    def __init__(self, flow: FlowConfig, source: AdminClient, target: AdminClient) -> None:
        self.flow = flow
        self.source = source
        self.target = target
        self.policy = flow.policy()
        self.filter = TopicFilter(flow)
        self._config_exclude = compile_patterns("config.properties.exclude", flow.config_properties_exclude)
        self.listed = 0  # how many topics the source listed at the last source_topics()
        self.create_timeout = TIMEOUT  # per CreateTopics batch; a late answer is waited for in the metadata

    @functools.cached_property
    def replication_factor(self) -> int:
        """Asked of the target when first needed, so building a TopicSync talks to no cluster."""
        return effective_replication_factor(self.target, self.flow.replication_factor)

    def remote_topic(self, topic: str) -> str:
        return self.policy.format_remote_topic(self.flow.source.alias, topic)

    def source_topics(self, timeout: float = TIMEOUT) -> dict[str, int]:
        """Source topics that pass the flow's filter, with their partition counts."""
        metadata = self.source.list_topics(timeout=timeout)
        self.listed = len(metadata.topics)
        topics = {
            name: len(meta.partitions)
            for name, meta in metadata.topics.items()
            if meta.error is None and self.filter.should_replicate(name)
        }
        too_long = [t for t in topics if len(self.remote_topic(t)) > MAX_TOPIC_NAME]
        for topic in too_long:
            # A remote name over Kafka's limit cannot exist; skipping it must not stop the flow's other topics.
            log.error(
                "%s: not replicating %s: its remote name exceeds %d characters", self.flow.name, topic, MAX_TOPIC_NAME
            )
            del topics[topic]
        return topics

    def remote_topics(self) -> dict[str, int]:
        """The target's topics with their partition counts: one metadata request, for the calls below to share."""
        return {name: len(m.partitions) for name, m in self.target.list_topics(timeout=TIMEOUT).topics.items()}

    def ensure_remote_topics(self, topics: dict[str, int], existing: Mapping[str, int] | None = None) -> None:
        """Create missing remote topics (with synced configs) and add partitions the source gained; `existing` is
        the target's topics as `remote_topics()` listed them, if the caller has them already."""
        existing = self.remote_topics() if existing is None else existing
        missing = [t for t in topics if self.remote_topic(t) not in existing]
        if missing:
            configs = self.source_configs(missing) if self.flow.sync_topic_configs_enabled else {}
            new = [
                NewTopic(
                    self.remote_topic(t), topics[t], self.replication_factor, config=self._remote_config(t, configs)
                )
                for t in missing
            ]
            # In batches: the broker's controller creates topics one by one (about 45 ms each here), and a single
            # request for 1,000 topics outlasted its 30 s wait and stopped the runner.
            unanswered: list[str] = []
            for batch in _batches(new):
                futures = self.target.create_topics(batch)
                unanswered += _wait_all(
                    futures,
                    ignore=KafkaError.TOPIC_ALREADY_EXISTS,
                    timeout=self.create_timeout,
                    refused=(self.flow.target.alias, "CREATE"),
                )
            names = [n.topic for n in new]
            log.info("%s: requested %d remote topics %s", self.flow.name, len(names), _abridged(names))
            if unanswered:
                # A busy controller answers late but still creates them: the caller waits for their metadata (the
                # runner's provisioning) or finds them at the next refresh (a task), which asks again if not.
                log.warning(
                    "%s: the target did not answer the creation of %d remote topics within %.0f s (e.g. %s); "
                    "waiting for them to show in its metadata",
                    self.flow.name,
                    len(unanswered),
                    self.create_timeout,
                    unanswered[0],
                )
        grow = [
            NewPartitions(self.remote_topic(t), n)
            for t, n in topics.items()
            if self.remote_topic(t) in existing and existing[self.remote_topic(t)] < n
        ]
        late: list[str] = []
        for more in _batches(grow):
            futures = self.target.create_partitions(more)
            late += _wait_all(
                futures,
                ignore=KafkaError.INVALID_PARTITIONS,
                timeout=self.create_timeout,
                refused=(self.flow.target.alias, "ALTER"),
            )
        if grow:
            log.info("%s: added partitions to %s", self.flow.name, _abridged([g.topic for g in grow]))
        if late:
            log.warning(
                "%s: the target did not answer adding partitions to %d remote topics within %.0f s (e.g. %s); "
                "their new partitions wait for its metadata",
                self.flow.name,
                len(late),
                self.create_timeout,
                late[0],
            )

    def missing_remote_topics(self, topics: Iterable[str], existing: Mapping[str, int] | None = None) -> list[str]:
        """Source topics whose remote topic no longer exists at the target."""
        existing = self.remote_topics() if existing is None else existing
        return [t for t in topics if self.remote_topic(t) not in existing]

    def source_configs(self, topics: Iterable[str]) -> dict[str, dict[str, str]]:
        """Topic-level overrides at the source, minus `config.properties.exclude`; with `use.defaults.from =
        source`, also each config the topic leaves at the source's default (MM2's shouldReplicateSourceDefault), so
        that the remote topic gets the source's value instead of the target's default."""
        result: dict[str, dict[str, str]] = {}
        defaults = self.flow.use_defaults_from == "source"
        for resource, entries in _described(self.source, self.flow.source.alias, list(topics), defaults):
            result[resource] = {
                name: value for name, value in entries.items() if not self._config_exclude.fullmatch(name)
            }
        return result

    def _remote_config(self, topic: str, configs: Mapping[str, dict[str, str]]) -> dict[str, str]:
        """A remote topic's overrides: the source's (when synced), and a broker's timestamp on a heartbeats topic."""
        config = dict(configs.get(topic, {}))
        if is_heartbeats_topic(self.policy, self.remote_topic(topic)):
            config["message.timestamp.type"] = STAMPED
        return config

    def stamp_heartbeats(self, admin: AdminClient, topics: Iterable[str]) -> list[str]:
        """Set ``message.timestamp.type=LogAppendTime`` on the heartbeats topics among ``topics`` that lack it (one
        DescribeConfigs, one IncrementalAlterConfigs); returns the topics changed."""
        heartbeats = [t for t in topics if is_heartbeats_topic(self.policy, t)]
        if not heartbeats:
            return []
        described = admin.describe_configs([ConfigResource(ResourceType.TOPIC, t) for t in heartbeats])
        stale = []
        for resource, future in described.items():
            try:
                if future.result(timeout=TIMEOUT)["message.timestamp.type"].value != STAMPED:
                    stale.append(resource.name)
            except KafkaException as exc:
                # Deleted since it was listed (a source's heartbeats topics come and go with other flows): nothing
                # to stamp, and no reason to stop this flow.
                if exc.args[0].code() != KafkaError.UNKNOWN_TOPIC_OR_PART:
                    raise named_refusal(exc, self._alias(admin), "DESCRIBE_CONFIGS", resource.name) from exc
                log.info("%s: %s no longer exists; not stamping it", self.flow.name, resource.name)
        if stale:
            entry = [ConfigEntry("message.timestamp.type", STAMPED, incremental_operation=AlterConfigOpType.SET)]
            resources = [ConfigResource(ResourceType.TOPIC, t, incremental_configs=entry) for t in stale]
            altered = admin.incremental_alter_configs(resources)
            refused = (self._alias(admin), "ALTER_CONFIGS")
            _wait_all(altered, ignore=KafkaError.UNKNOWN_TOPIC_OR_PART, timeout=TIMEOUT, refused=refused)
            log.info("%s: heartbeats now stamped by their broker in %s", self.flow.name, stale)
        return stale

    def _alias(self, admin: AdminClient) -> str:
        return self.flow.source.alias if admin is self.source else self.flow.target.alias

    def sync_configs(self, topics: Iterable[str]) -> list[str]:
        """Make each remote topic's overrides equal the source's; return the remote topics changed. A heartbeats
        topic keeps its broker's timestamps (``message.timestamp.type=LogAppendTime``) whatever the source says."""
        wanted = {t: self._remote_config(t, configs) for configs in [self.source_configs(topics)] for t in configs}
        current = self._target_overrides([self.remote_topic(t) for t in wanted])
        changed = []
        for topic, config in wanted.items():
            remote = self.remote_topic(topic)
            have = {k: v for k, v in current.get(remote, {}).items() if not self._config_exclude.fullmatch(k)}
            if have != config:
                # Legacy AlterConfigs replaces the topic's overrides; keep the target's excluded ones.
                keep = {k: v for k, v in current.get(remote, {}).items() if self._config_exclude.fullmatch(k)}
                resource = ConfigResource(ResourceType.TOPIC, remote, set_config={**keep, **config})
                altered = self.target.alter_configs([resource])
                if _wait_all(altered, ignore=None, timeout=TIMEOUT, refused=(self.flow.target.alias, "ALTER_CONFIGS")):
                    log.warning("%s: the target did not answer a config change of %s in time", self.flow.name, remote)
                changed.append(remote)
        if changed:
            log.info("%s: synced configs of %s", self.flow.name, changed)
        return changed

    def _target_overrides(self, remotes: list[str]) -> dict[str, dict[str, str]]:
        return dict(_described(self.target, self.flow.target.alias, remotes))

    def sync_acls(self, topics: Iterable[str]) -> list[AclBinding]:
        """Copy LITERAL topic ALLOW bindings; never WRITE; ALL becomes READ (MM2's rules)."""
        wanted = set(topics)
        # None matches any name, principal and host; the stubs only admit str.
        any_: Any = None
        pattern = AclBindingFilter(
            ResourceType.TOPIC, any_, ResourcePatternType.LITERAL, any_, any_, AclOperation.ANY, AclPermissionType.ALLOW
        )
        try:
            bindings = self.source.describe_acls(pattern).result(timeout=TIMEOUT)
        except KafkaException as exc:
            raise named_refusal(exc, self.flow.source.alias, "DESCRIBE", "CLUSTER") from exc
        remote = [target_acl_binding(b, self.remote_topic(b.name)) for b in bindings if b.name in wanted]
        copies = [b for b in remote if b is not None]
        if copies:
            for future in self.target.create_acls(copies).values():
                try:
                    future.result(timeout=TIMEOUT)
                except KafkaException as exc:
                    raise named_refusal(exc, self.flow.target.alias, "ALTER", "CLUSTER") from exc
        return copies


def effective_replication_factor(admin: AdminClient, configured: int) -> int:
    """-1 means the cluster default; brokers before 2.4 cannot apply it (KIP-464), so use min(brokers, 3)."""
    if configured > 0:
        return configured
    return max(1, min(3, len(admin.list_topics(timeout=TIMEOUT).brokers)))


def target_acl_binding(binding: AclBinding, remote_topic: str) -> AclBinding | None:
    if binding.operation == AclOperation.WRITE:
        return None
    operation = AclOperation.READ if binding.operation == AclOperation.ALL else binding.operation
    return AclBinding(
        ResourceType.TOPIC,
        remote_topic,
        ResourcePatternType.LITERAL,
        binding.principal,
        binding.host,
        operation,
        AclPermissionType.ALLOW,
    )


BATCH = 100  # topics per CreateTopics / CreatePartitions request
T = TypeVar("T")


def _resource_name(key: Any) -> str:
    """The topic an admin future answers for: a name, or a ConfigResource / NewPartitions naming it."""
    return str(getattr(key, "name", None) or getattr(key, "topic", None) or key)


def _described(
    admin: AdminClient, cluster: str, topics: list[str], defaults: bool = False
) -> Iterator[tuple[str, dict[str, str]]]:
    """Each topic's dynamic (topic-level) config overrides, and with ``defaults`` its configs at their default
    (neither read-only nor sensitive, as MM2 syncs them), asked in batches: one request for a thousand topics
    outlasted its wait on a busy broker (a 10,000-partition flow's start). A refusal names the ACL (on
    `cluster`)."""
    for batch in _batches(topics):
        futures = admin.describe_configs([ConfigResource(ResourceType.TOPIC, t) for t in batch])
        deadline = time.monotonic() + TIMEOUT
        for resource, future in futures.items():
            try:
                entries = future.result(timeout=max(deadline - time.monotonic(), 0.0))
            except KafkaException as exc:
                raise named_refusal(exc, cluster, "DESCRIBE_CONFIGS", resource.name) from exc
            yield (
                resource.name,
                {
                    name: entry.value
                    for name, entry in entries.items()
                    if entry.value is not None
                    and (
                        entry.source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value or (defaults and _copied_default(entry))
                    )
                },
            )


def _copied_default(entry: Any) -> bool:  # a ConfigEntry, whose source is an int: the stubs say ConfigSource
    """A config at its default that `use.defaults.from = source` copies: not a read-only one (a target refuses
    it), nor a sensitive one (its value reads None)."""
    return bool(entry.source == ConfigSource.DEFAULT_CONFIG.value and not entry.is_read_only and not entry.is_sensitive)


def _batches(items: list[T]) -> Iterator[list[T]]:
    for start in range(0, len(items), BATCH):
        yield items[start : start + BATCH]


def _abridged(names: list[str], shown: int = 10) -> str:
    """A log line's list of names: the first few and how many more (a flow may create thousands)."""
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return f"{names[:shown]}{more}"


def _wait_all(
    futures: Mapping[Any, Future[Any]], ignore: int | None, timeout: float, refused: tuple[str, str] = ("", "")
) -> list[str]:
    """Wait for every admin future until one shared deadline; returns the names left unanswered by then (a broker
    error other than `ignore` raises; an authorization failure names the `refused` (cluster, operation) and the
    resource)."""
    deadline = time.monotonic() + timeout
    unanswered: list[str] = []
    for name, future in futures.items():
        try:
            future.result(timeout=max(deadline - time.monotonic(), 0.0))
        except KafkaException as exc:
            if ignore is None or exc.args[0].code() != ignore:
                raise named_refusal(exc, *refused, _resource_name(name)) from exc
        except TimeoutError:
            unanswered.append(str(name))
    return unanswered
