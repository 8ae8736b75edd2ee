"""The cluster browser's reads: topics with their partitions and offsets, consumer groups with their lag (what Kafka
UI and AKHQ show), read-only.

A request costs a fixed number of calls whatever the cluster's size. Lists page *before* asking for offsets: one
metadata call (or one ListGroups), then the earliest and latest offsets of the page's partitions only, each one
batched ListOffsets request (librdkafka sends one per leader broker), never one call per partition or per group.
Every call carries READ_TIMEOUT. Clients are built from ``client_settings``, whose password stays in librdkafka:
nothing here puts a setting in a result or a log line.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, TypeVar

from confluent_kafka import ConsumerGroupState, ConsumerGroupTopicPartitions, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource, OffsetSpec, TopicMetadata
from rest_framework.exceptions import NotFound

from controlplane.clusters.models import Cluster
from controlplane.clusters.reads import reading
from controlplane.clusters.services import client_settings
from replication.clientlog import logged
from replication.mm2.policy import ReplicationPolicy, is_internal_topic, original_topic, source_chain
from replication.offsets import mirrorclient

READ_TIMEOUT = 10.0
# A future's own wait: the request timeout above bounds the call, this only guards against a lost callback.
_WAIT = READ_TIMEOUT + 2.0
T = TypeVar("T")
Offsets = dict[tuple[str, int], int | None]


@dataclass(frozen=True)
class PageQuery:
    """Which page of a list: names containing ``search`` (any case), sorted, ``limit`` of them from ``offset``."""

    search: str = ""
    limit: int = 100
    offset: int = 0

    def select(self, names: Iterable[str]) -> tuple[int, list[str]]:
        """The number of matching names and the page of them."""
        needle = self.search.casefold()
        matching = sorted(name for name in names if needle in name.casefold())
        return len(matching), matching[self.offset : self.offset + self.limit]


def admin(cluster: Cluster) -> AdminClient:
    """An admin client of the cluster with the browser's timeouts (the fuzz test replaces it, so it dials no one)."""
    milliseconds = int(READ_TIMEOUT * 1000)
    config = {
        **client_settings(cluster),
        "socket.timeout.ms": milliseconds,
        "socket.connection.setup.timeout.ms": milliseconds,
    }
    return AdminClient(logged(config))


def listed_topics(client: AdminClient) -> dict[str, TopicMetadata]:
    """Every topic of the cluster, from one metadata call that never creates one (no topic is named in it)."""
    metadata = client.list_topics(timeout=READ_TIMEOUT)
    return {name: meta for name, meta in metadata.topics.items() if meta.error is None}


def topics(cluster: Cluster, query: PageQuery) -> dict[str, Any]:
    """A page of the cluster's topics: partitions, replication factor, internal or not, end offset and records."""

    def read() -> dict[str, Any]:
        client = admin(cluster)
        listed = listed_topics(client)
        count, names = query.select(listed)
        return {"count": count, "results": topic_rows(client, {name: listed[name] for name in names})}

    return reading(cluster.alias, read, [cluster])


def topic_rows(client: AdminClient, metas: Mapping[str, TopicMetadata]) -> list[dict[str, Any]]:
    """One row per topic, with the offsets of all their partitions read in one batch."""
    start, end = offsets(client, [(name, p) for name, meta in metas.items() for p in meta.partitions])
    return [_topic_row(name, meta, start, end) for name, meta in metas.items()]


def _topic_row(name: str, meta: TopicMetadata, start: Offsets, end: Offsets) -> dict[str, Any]:
    keys = [(name, p) for p in meta.partitions]
    end_offset, records = _totals([(start.get(key), end.get(key)) for key in keys])
    return {
        "topic": name,
        "partitions": len(keys),
        "replication_factor": max((len(p.replicas) for p in meta.partitions.values()), default=0),
        "internal": is_internal_topic(name),
        "end_offset": end_offset,
        "records": records,
    }


def _totals(pairs: list[tuple[int | None, int | None]]) -> tuple[int | None, int | None]:
    """The summed end offsets and records (end - start) of the partitions, or None when one did not answer: a
    partial sum would pass for the topic's."""
    end_offset = records = 0
    for low, high in pairs:
        if low is None or high is None:
            return None, None
        end_offset, records = end_offset + high, records + high - low
    return end_offset, records


def topic(cluster: Cluster, name: str) -> dict[str, Any]:
    """One topic: per partition its leader, replicas, in-sync replicas and offsets; its non-default configs."""

    def read() -> dict[str, Any]:
        client = admin(cluster)
        meta = listed_topics(client).get(name)
        if meta is None:
            raise NotFound(f"{cluster.alias}: no topic {name!r}")
        configs = client.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, name)], request_timeout=_WAIT)
        keys = [(name, p) for p in sorted(meta.partitions)]
        start, end = offsets(client, keys)
        partitions = [_partition_row(meta, key, start, end) for key in keys]
        entries = _result(next(iter(configs.values())))
        return {**_topic_row(name, meta, start, end), "partition_details": partitions, "configs": _non_default(entries)}

    return reading(cluster.alias, read, [cluster])


def _partition_row(meta: TopicMetadata, key: tuple[str, int], start: Offsets, end: Offsets) -> dict[str, Any]:
    described = meta.partitions[key[1]]
    low, high = start.get(key), end.get(key)
    return {
        "partition": key[1],
        "leader": described.leader if described.leader >= 0 else None,
        "replicas": list(described.replicas),
        "isr": list(described.isrs),
        "start_offset": low,
        "end_offset": high,
        "records": high - low if low is not None and high is not None else None,
    }


def _non_default(entries: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Configs not at Kafka's default: the topic's own overrides and what the brokers set for every topic.

    A sensitive value is never sent by the broker; it stays null here."""
    found = []
    for name, entry in sorted(entries.items()):
        if entry.is_default or entry.source == ConfigSource.DEFAULT_CONFIG.value:
            continue
        value = None if entry.is_sensitive else entry.value
        found.append({"name": name, "value": value, "source": ConfigSource(entry.source).name})
    return found


def groups(cluster: Cluster, query: PageQuery) -> dict[str, Any]:
    """A page of the cluster's consumer groups: state and member count (described for the page only)."""

    def read() -> dict[str, Any]:
        client = admin(cluster)
        listed = _result(client.list_consumer_groups(request_timeout=READ_TIMEOUT))
        if listed.errors:  # a broker that did not answer: its groups would be missing without a word
            raise listed.errors[0]
        count, ids = query.select({g.group_id for g in listed.valid})
        described = client.describe_consumer_groups(ids, request_timeout=READ_TIMEOUT) if ids else {}
        return {"count": count, "results": [_group_row(group, _result(described[group])) for group in ids]}

    return reading(cluster.alias, read, [cluster])


def _group_row(group: str, description: Any) -> dict[str, Any]:
    return {
        "group": group,
        "state": description.state.name,
        "members": len(description.members),
        "simple": bool(description.is_simple_consumer_group),
    }


def remote_topics(cluster: Cluster, policy: ReplicationPolicy, query: PageQuery) -> dict[str, Any]:
    """A page of the topics that are remote copies by the policy's names (MM2's MirrorClient.remoteTopics), each
    with the clusters it came through, and every upstream cluster whose heartbeats reach this one, with its hops."""

    def read() -> dict[str, Any]:
        client = admin(cluster)
        listed = listed_topics(client)
        count, names = query.select(mirrorclient.remote_topics(policy, listed))
        rows = topic_rows(client, {name: listed[name] for name in names})
        return {
            "count": count,
            "upstream_hops": mirrorclient.upstream_hops(policy, listed),
            "results": [row | _origin(policy, row["topic"]) for row in rows],
        }

    return reading(cluster.alias, read, [cluster])


def _origin(policy: ReplicationPolicy, topic: str) -> dict[str, Any]:
    return {
        "source": policy.topic_source(topic),
        "source_chain": source_chain(policy, topic),
        "upstream_topic": policy.upstream_topic(topic),
        "original_topic": original_topic(policy, topic),
    }


def group(cluster: Cluster, group_id: str) -> dict[str, Any]:
    """One consumer group: its members and assignments, and per partition the committed offset, end offset and lag.

    The partitions are those the group committed an offset for, and those assigned to a member without one (their
    committed offset and lag are null: nothing committed is not the same as a lag of 0)."""

    def read() -> dict[str, Any]:
        client = admin(cluster)
        # Both requests go out before either is awaited.
        described = client.describe_consumer_groups([group_id], request_timeout=READ_TIMEOUT)[group_id]
        request = [ConsumerGroupTopicPartitions(group_id)]
        fetched = client.list_consumer_group_offsets(request, request_timeout=READ_TIMEOUT)[group_id]
        description, committed = _described(cluster, group_id, described), _committed(_result(fetched))
        if description.state == ConsumerGroupState.DEAD and not committed:
            raise NotFound(f"{cluster.alias}: no consumer group {group_id!r}")
        members = [_member(m) for m in description.members]
        assigned = {(t, p): m["client_id"] for m in members for t, p in _pairs(m["assignment"])}
        keys = sorted(set(committed) | set(assigned))
        _, end = offsets(client, keys, earliest=False)
        return {
            **_group_row(group_id, description),
            "coordinator": description.coordinator.id if description.coordinator is not None else None,
            "assignor": description.partition_assignor or "",
            "member_details": members,
            "offsets": [_lag_row(key, committed.get(key), end.get(key), assigned.get(key)) for key in keys],
        }

    return reading(cluster.alias, read, [cluster])


def _described(cluster: Cluster, group_id: str, future: Future[Any]) -> Any:
    try:
        return _result(future)
    except KafkaException as exc:
        if exc.args[0].code() == KafkaError.GROUP_ID_NOT_FOUND:  # what brokers since 3.x answer for no such group
            raise NotFound(f"{cluster.alias}: no consumer group {group_id!r}") from None
        raise


def _committed(fetched: Any) -> dict[tuple[str, int], int]:
    """(topic, partition) -> committed offset, for the partitions that have one."""
    return {
        (tp.topic, tp.partition): tp.offset for tp in fetched.topic_partitions if tp.error is None and tp.offset >= 0
    }


def _member(member: Any) -> dict[str, Any]:
    assignment = member.assignment.topic_partitions if member.assignment is not None else []
    return {
        "member_id": member.member_id,
        "client_id": member.client_id,
        "host": member.host,
        "assignment": [{"topic": tp.topic, "partition": tp.partition} for tp in sorted(assignment, key=_key)],
    }


def _pairs(assignment: list[dict[str, Any]]) -> list[tuple[str, int]]:
    return [(a["topic"], a["partition"]) for a in assignment]


def _lag_row(key: tuple[str, int], committed: int | None, end: int | None, client_id: str | None) -> dict[str, Any]:
    return {
        "topic": key[0],
        "partition": key[1],
        "committed_offset": committed,
        "end_offset": end,
        "lag": end - committed if committed is not None and end is not None else None,
        "client_id": client_id,
    }


def offsets(client: AdminClient, keys: list[tuple[str, int]], earliest: bool = True) -> tuple[Offsets, Offsets]:
    """The start and end offsets of the partitions: two batched ListOffsets sent together (the start is skipped
    when not ``earliest``). A partition that did not answer (no leader) is None; if none answered, the first
    error is raised, so an unreadable cluster is an error and never a table of blanks."""
    if not keys:
        return {}, {}
    specs = [OffsetSpec.latest()] + ([OffsetSpec.earliest()] if earliest else [])  # type: ignore[no-untyped-call]  # confluent-kafka leaves them unannotated
    pending = [
        client.list_offsets({TopicPartition(t, p): s for t, p in keys}, request_timeout=READ_TIMEOUT) for s in specs
    ]
    end, *rest = [_offsets(futures) for futures in pending]
    return (rest[0] if rest else {}), end


def _offsets(futures: Mapping[TopicPartition, Future[Any]]) -> Offsets:
    found: Offsets = {}
    errors: list[KafkaException] = []
    for tp, future in futures.items():
        try:
            found[(tp.topic, tp.partition)] = int(_result(future).offset)
        except KafkaException as exc:
            found[(tp.topic, tp.partition)] = None
            errors.append(exc)
    if errors and len(errors) == len(found):
        raise errors[0]
    return found


def _result(future: Future[T]) -> T:
    return future.result(timeout=_WAIT)


def _key(tp: TopicPartition) -> tuple[str, int]:
    return (tp.topic, tp.partition)
