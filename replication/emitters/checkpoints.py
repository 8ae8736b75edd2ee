"""CheckpointEmitter: source consumer groups' committed offsets, translated exactly, as checkpoints in the target.

Every emit.checkpoints.interval.seconds the caller runs `run_once()`: it lists the source groups that pass the
flow's group filter, reads their committed offsets for topics the flow replicates, translates each one with the
offset syncs, and writes the checkpoints that changed to `<source alias>.checkpoints.internal` in the target
(compacted by group, topic, partition). A position no sync covers gets no checkpoint: checkpoints never guess.

Latency: a group offset that no sync covers yet (the group committed at the live tip and the sync of that
position is a moment behind) can be retried with `retry_untranslated()` before the next full round: a retry
costs an incremental read of the offset syncs and no admin request (`periodic.CheckpointSchedule` does this).

Monotonicity, per (group, remote topic, partition): a checkpoint is written only if it differs from the last one
and either its downstream offset is not lower, or its upstream offset is lower (the group was reset backwards,
so the downstream offset may follow it back). The last checkpoints are read back from the topic on start, so the
rule holds across restarts.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient

from replication.config import FlowConfig
from replication.kafka.clients import ClientFactory
from replication.kafka.internaltopics import COMPACTED_CONFIG, TIMEOUT, TopicTail, ensure_topic, flow_checkpoints_topic
from replication.mm2.filters import GroupFilter, TopicFilter
from replication.mm2.records import Checkpoint, LatestCheckpoints, latest_checkpoints
from replication.offsets.checkpoints import GroupOffset, group_offsets, list_groups, read_checkpoints
from replication.offsets.syncstore import OffsetSyncReader


def advances(last: Checkpoint | None, new: Checkpoint) -> bool:
    """The monotonicity rule of the module docstring."""
    if last is None:
        return True
    if (last.upstream_offset, last.downstream_offset) == (new.upstream_offset, new.downstream_offset):
        return False
    return new.downstream_offset >= last.downstream_offset or new.upstream_offset < last.upstream_offset


class CheckpointEmitter:
    """One flow's checkpoint emission: `run_once()` writes one round of checkpoints (see the module docstring)."""

    def __init__(
        self, flow: FlowConfig, clients: ClientFactory | None = None, clock: Callable[[], float] = time.time
    ) -> None:
        self.flow = flow
        self.clients = clients or ClientFactory()
        self.clock = clock
        self.topic = flow_checkpoints_topic(flow)
        self.emit_interval = flow.emit_checkpoints_interval_seconds
        self.retry_interval = min(0.2, self.emit_interval / 5)
        self.group_filter = GroupFilter(flow)
        self.topic_filter = TopicFilter(flow)
        self.policy = flow.policy()
        self.syncs = OffsetSyncReader(flow, self.clients)
        self.last: LatestCheckpoints = {}  # the newest checkpoint written (or read back) per key
        self.untranslated = 0  # group offsets no sync covered in the last round
        self.offsets: list[GroupOffset] = []  # as read by the last full round
        self._admin: AdminClient | None = None
        self._producer: Producer | None = None

    @property
    def interval(self) -> float:
        return self.emit_interval

    def run_once(self) -> bool:
        """One full round: read the groups' offsets, translate, write what changed; whether it wrote anything."""
        # `is None`, not `or`: a client with nothing queued has len() 0 and is falsy, and `or` started the emitter
        # again every round (new clients, the target's whole metadata listed, the checkpoints topic read again).
        admin = self._start() if self._admin is None else self._admin
        self.offsets = group_offsets(admin, list_groups(admin, self.group_filter), self.topic_filter)
        return self._emit()

    def retry_untranslated(self) -> bool:
        """Translate the last round's offsets again with the syncs written since; no admin requests."""
        return self._emit() if self.untranslated and self._admin is not None else False

    def _emit(self) -> bool:
        self.syncs.update()
        new = [cp for cp in self.checkpoints(self.offsets) if advances(self._last(cp), cp)]
        self._write(new)
        return bool(new)

    def checkpoints(self, offsets: Iterable[GroupOffset]) -> list[Checkpoint]:
        """Checkpoints for the offsets that syncs translate exactly; the others are counted in `untranslated`."""
        now = int(self.clock() * 1000)
        result, missing = [], 0
        for g in offsets:
            downstream = self.syncs.store.translate(g.topic, g.partition, g.offset)
            if downstream is None:
                missing += 1
                continue
            remote = self.policy.format_remote_topic(self.flow.source.alias, g.topic)
            result.append(Checkpoint(g.group, remote, g.partition, g.offset, downstream, g.metadata, now))
        self.untranslated = missing
        return result

    def close(self) -> None:
        if self._producer is not None:
            self._producer.flush(TIMEOUT)
        self.syncs.close()

    def _start(self) -> AdminClient:
        self._admin = self.clients.admin(self.flow.source)
        target_admin = self.clients.admin(self.flow.target)
        ensure_topic(target_admin, self.topic, COMPACTED_CONFIG)
        tail = TopicTail(self.clients.consumer(self.flow.target, f"{self.flow.name}-checkpoints"), self.topic)
        try:
            self.last = latest_checkpoints(read_checkpoints(tail))
        finally:
            tail.close()
        self._producer = self.clients.producer(self.flow.target)
        return self._admin

    def _last(self, cp: Checkpoint) -> Checkpoint | None:
        return self.last.get(cp.consumer_group_id, {}).get((cp.topic, cp.partition))

    def _write(self, checkpoints: list[Checkpoint]) -> None:
        if not checkpoints or self._producer is None:
            return
        for cp in checkpoints:
            key, value = cp.to_bytes()
            self._producer.produce(self.topic, value, key, 0, timestamp=cp.timestamp or 0)
            latest_checkpoints([cp], self.last)  # the next round compares with what was produced
        remaining = self._producer.flush(TIMEOUT)
        if remaining:
            raise TimeoutError(f"{self.topic}: {remaining} checkpoints not delivered within {TIMEOUT}s")
