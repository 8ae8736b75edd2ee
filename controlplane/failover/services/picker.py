"""The plan step's group picker: the source cluster's consumer groups that committed offsets in topics a flow
replicates, with their state, their lag on those topics and how fresh the flow's checkpoints of them are.

The selection is the checkpoint emitter's own (``replication.offsets.checkpoints.group_offsets`` with the flow's
TopicFilter), so a group listed here is one whose offsets the flow can translate. A group the flow's groups filter
leaves out is listed too, flagged, because the pre-flight would refuse it and the operator should see why.

What a request costs, whatever the cluster's size (every call carries ``browse.READ_TIMEOUT``):
- the connectivity check, then one ListGroups;
- one OffsetFetch (ListConsumerGroupOffsets) per group whose id contains ``search``, at most MAX_SCANNED of them,
  all in flight together: Kafka 2.3 has no batched OffsetFetch for several groups, and only the committed offsets
  say which topics a group consumed (an EMPTY group has no assignment to describe). More groups than that answer
  ``truncated`` and the operator narrows the search;
- for the page only: one DescribeConsumerGroups and one batched ListOffsets (latest) of its committed partitions.
So a request ends within about four read timeouts even when the cluster stops answering half-way.

The checkpoint freshness is the sampler's stored FlowObservation, read from the database before any Kafka call;
none is a checkpoint not seen yet, never an age of 0.
"""

from __future__ import annotations

import time
from collections import defaultdict
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from confluent_kafka.admin import AdminClient

from controlplane.clusters import browse
from controlplane.clusters.browse import PageQuery
from controlplane.clusters.reads import reading
from controlplane.flows.models import Flow
from controlplane.flows.services import flow_config
from controlplane.monitoring.models import FlowObservation
from replication.mm2.filters import GroupFilter, TopicFilter
from replication.offsets.checkpoints import GroupOffset, group_offsets

MAX_SCANNED = 200
T = TypeVar("T")


@dataclass(frozen=True)
class _Checkpoints:
    """The flow's stored checkpoint observation: when it was read, its error, and group -> freshness."""

    read_at: datetime | None
    error: str
    groups: dict[str, Any]

    @classmethod
    def of(cls, flow: Flow) -> _Checkpoints:
        observation = FlowObservation.objects.filter(flow=flow).first()
        if observation is None:
            return cls(None, "", {})
        return cls(observation.at, observation.error, dict(observation.checkpoints))

    def of_group(self, group: str, now_ms: int) -> dict[str, Any]:
        fresh = self.groups.get(group) or {}
        stamp = fresh.get("timestamp")
        return {
            "checkpoint_timestamp": stamp,
            "checkpoint_age_seconds": max(0.0, (now_ms - stamp) / 1000) if stamp is not None else None,
            "checkpoint_partitions": fresh.get("partitions", 0),
        }


# Mirrorplane's own readers (the analytics jobs' heartbeat group, reports.services.HEARTBEAT_GROUP) consume the
# heartbeats topic every flow replicates; they are no operator's application and never fail over.
OWN_GROUPS = "__mirrorplane-"


def consuming_groups(flow: Flow, query: PageQuery) -> dict[str, Any]:
    """A page of the flow source's groups with committed offsets in topics the flow replicates (module docstring)."""
    config = flow_config(flow)  # carries passwords: it stays in the clients, never in a row
    topics, wanted = TopicFilter(config), GroupFilter(config)
    checkpoints = _Checkpoints.of(flow)
    source = flow.source

    def read() -> dict[str, Any]:
        client = browse.admin(source)
        listed = _wait(client.list_consumer_groups(request_timeout=browse.READ_TIMEOUT))
        if listed.errors:  # a broker that did not answer: its groups would be missing without a word
            raise listed.errors[0]
        ids = (g.group_id for g in listed.valid if not g.group_id.startswith(OWN_GROUPS))
        candidates, scanned = PageQuery(query.search, MAX_SCANNED).select(ids)
        committed = _by_group(group_offsets(client, scanned, topics, timeout=browse.READ_TIMEOUT))
        consuming = sorted(committed)
        page = consuming[query.offset : query.offset + query.limit]
        rows = _rows(client, page, committed, wanted, checkpoints)
        return {
            "count": len(consuming),
            "scanned": len(scanned),
            "truncated": candidates > len(scanned),
            "checkpoints_read_at": checkpoints.read_at,
            "checkpoints_error": checkpoints.error,
            "results": rows,
        }

    return reading(source.alias, read, [source])


def _by_group(offsets: list[GroupOffset]) -> dict[str, dict[tuple[str, int], int]]:
    found: dict[str, dict[tuple[str, int], int]] = defaultdict(dict)
    for offset in offsets:
        found[offset.group][(offset.topic, offset.partition)] = offset.offset
    return found


def _rows(
    client: AdminClient,
    page: list[str],
    committed: dict[str, dict[tuple[str, int], int]],
    wanted: GroupFilter,
    checkpoints: _Checkpoints,
) -> list[dict[str, Any]]:
    if not page:
        return []
    described = client.describe_consumer_groups(page, request_timeout=browse.READ_TIMEOUT)
    keys = sorted({key for group in page for key in committed[group]})
    _, end = browse.offsets(client, keys, earliest=False)
    now_ms = int(time.time() * 1000)
    rows = []
    for group in page:
        description = _wait(described[group])
        positions = committed[group]
        rows.append(
            {
                "group": group,
                "state": description.state.name,
                "members": len(description.members),
                "topics": sorted({topic for topic, _ in positions}),
                "partitions": len(positions),
                "lag": _lag(positions, end),
                "in_groups_filter": wanted.should_replicate(group),
                **checkpoints.of_group(group, now_ms),
            }
        )
    return rows


def _wait(future: Future[T]) -> T:
    return future.result(timeout=browse.READ_TIMEOUT + 2.0)  # the request timeout bounds the call; this a lost callback


def _lag(positions: dict[tuple[str, int], int], end: browse.Offsets) -> int | None:
    """End minus committed, summed over the group's partitions; None when a partition's end did not answer (a partial
    sum would pass for the group's)."""
    total = 0
    for key, offset in positions.items():
        high = end.get(key)
        if high is None:
            return None
        total += high - offset
    return total
