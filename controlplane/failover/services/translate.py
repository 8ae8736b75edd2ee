"""Per-partition offset plans for moving consumer groups from the source cluster to the target.

Two directions, both exact when offset syncs cover the position:
- forward: a topic the flow source->target replicates; replication/'s OffsetTranslator gives the downstream
  offset and how it was derived (sync: exact; timestamp: approximate, with the window at risk).
- back to its origin: a remote topic that came from the target (``us-west.orders`` in us-east, failing back to
  us-west). The offset syncs of the flow target->source describe that copy; the plan inverts them with
  replication/'s upstream_position: the smallest upstream position whose copy is at or after the group's position
  (equivalent: everything between is not replicated). It is what makes a failback as exact as the failover.
When the source cannot be read (unplanned), the plan is the group's last checkpoint in the target.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from controlplane.failover.results import PartitionPlan
from replication.config import FlowConfig
from replication.mm2.filters import TopicFilter
from replication.mm2.records import Checkpoint
from replication.offsets.syncstore import OffsetSyncReader
from replication.offsets.translation import SYNC, OffsetTranslator, upstream_position

Partition = tuple[str, int]
INVERSE = "sync-inverse"
CHECKPOINT = "checkpoint"
NONE = "none"


class Planner:
    """Plans partitions for one failover: ``forward`` is the flow source->target, ``inverse`` target->source."""

    def __init__(self, forward: FlowConfig | None, inverse: FlowConfig | None) -> None:
        self.forward, self.inverse = forward, inverse
        self._translator = OffsetTranslator(forward) if forward is not None else None
        self._filter = TopicFilter(forward) if forward is not None else None
        self._inverse_reader = OffsetSyncReader(inverse) if inverse is not None else None
        if self._inverse_reader is not None:
            self._inverse_reader.update()

    def plan(self, group: str, offsets: dict[Partition, int]) -> list[PartitionPlan]:
        return [self.partition(group, t, p, o) for (t, p), o in sorted(offsets.items())]

    def partition(self, group: str, topic: str, partition: int, offset: int) -> PartitionPlan:
        origin = self._origin(topic)
        if origin is not None:
            return self._back_to_origin(group, topic, partition, offset, origin)
        if self._translator is not None and self._filter is not None and self._filter.should_replicate(topic):
            t = self._translator.translate(topic, partition, offset)
            exact = t.method == SYNC
            zero = 0 if exact else None
            return PartitionPlan(
                group,
                topic,
                partition,
                offset,
                t.remote_topic,
                t.downstream_offset,
                t.method,
                exact,
                t.window,
                zero,
                zero,
            )
        note = "no flow replicates this topic to the target: the group has no position there"
        return PartitionPlan(group, topic, partition, offset, topic, None, NONE, False, note)

    def close(self) -> None:
        if self._translator is not None:
            self._translator.close()
        if self._inverse_reader is not None:
            self._inverse_reader.close()

    def _origin(self, topic: str) -> str | None:
        """The topic's name in the target if it is a copy of a target topic, else None."""
        if self.inverse is None:
            return None
        policy = self.inverse.policy()
        if policy.topic_source(topic) != self.inverse.source.alias:
            return None
        return policy.upstream_topic(topic)

    def _back_to_origin(self, group: str, topic: str, partition: int, offset: int, origin: str) -> PartitionPlan:
        assert self._inverse_reader is not None
        found = upstream_position(self._inverse_reader.store, origin, partition, offset)
        if found is None:
            note = (
                f"offset syncs of {self.inverse.name if self.inverse else '?'} do not cover position {offset} of "
                f"{topic}: it was not replicated from {origin}, or replication has not reached it"
            )
            return PartitionPlan(group, topic, partition, offset, origin, None, INVERSE, False, note)
        return PartitionPlan(group, topic, partition, offset, origin, found, INVERSE, True, "", 0, 0)


def from_checkpoints(group: str, checkpoints: dict[Partition, Checkpoint], upstream_topic: Any) -> list[PartitionPlan]:
    """Plans from the group's last checkpoints, for a source that cannot be read."""
    plans = []
    for (remote, partition), cp in sorted(checkpoints.items()):
        when = "" if cp.timestamp is None else f" of {datetime.fromtimestamp(cp.timestamp / 1000, UTC):%H:%M:%S} UTC"
        note = (
            f"last checkpoint{when}: what the group read after it is read again; writes not replicated "
            "before the outage are missing (RPO)"
        )
        plans.append(
            PartitionPlan(
                group,
                upstream_topic(remote) or remote,
                partition,
                cp.upstream_offset,
                remote,
                cp.downstream_offset,
                CHECKPOINT,
                False,
                note,
            )
        )
    return plans
