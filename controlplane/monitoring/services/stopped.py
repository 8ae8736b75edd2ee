"""The lag of the partitions no live task holds: those of unplaced, stopped, failed or paused tasks.

Such a task's last report is frozen (or, for a task that never ran, missing) while the source grows, so the observer
reads what the task would resume from instead: the flow's stored position of each partition (the positions topic on
the target, ``replication.kafka.positions``), or the source log start where none is stored or it is out of the log
(``replication.task.dataloss.check_start``, the task's own rule), against the source end offset. Every desired
partition of such a task is covered, so one whose task never ran is listed and counted too.

The figures are written into the partitions' ``PartitionReport`` rows (the flow status pages them) and summed into
``FlowObservation.stopped_lag`` with the task ids they cover (``health.current_lag`` adds the live tasks' own).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from confluent_kafka import KafkaException
from django.db import IntegrityError
from django.db.models import Q
from django.utils import timezone

from controlplane.clusters import browse
from controlplane.flows.models import Flow
from controlplane.flows.services import flow_config
from controlplane.orchestration.models import PartitionReport, TaskAssignment
from controlplane.orchestration.services.leases import holds_live_lease
from controlplane.orchestration.services.taskreports import BATCH
from controlplane.orchestration.taskstatus import compact, expand
from replication.config import FlowConfig
from replication.kafka import positions
from replication.kafka.clients import position_reader_config
from replication.mm2.policy import is_heartbeats_topic, is_internal_topic
from replication.task.dataloss import check_start

log = logging.getLogger(__name__)
Key = tuple[str, int]
POSITIONS_READ_SECONDS = 10.0


@dataclass(frozen=True)
class PartitionLag:
    """Where a partition not held by a live task stands: the offset its task resumes from and the records after it."""

    task: int  # the assignment's primary key
    position: int | None  # the stored position; None: none stored, the task starts at the source log start
    lag: int | None  # None: the source did not answer for this partition


@dataclass(frozen=True)
class StoppedLag:
    """The observed lag of the tasks holding no live lease (``tasks``, by task id); ``lag`` None: not read."""

    lag: int | None = None
    tasks: list[int] = field(default_factory=list)
    partitions: dict[Key, PartitionLag] = field(default_factory=dict)


def stopped_partitions(flow: Flow) -> tuple[dict[Key, int], list[int]]:
    """The data partitions desired of the tasks holding no live lease (every task while the flow is paused), each
    with its assignment's primary key, and those tasks' ids."""
    config = flow_config(flow)
    policy = config.policy()
    wanted: dict[Key, int] = {}
    tasks: list[int] = []
    rows = TaskAssignment.objects.filter(flow=flow).only("pk", "task_id", "partitions", "lease_expires_at")
    if not flow.paused:  # a running flow's live tasks' partition lists (35 KB a task at 10,000) are not loaded
        rows = rows.filter(Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lte=timezone.now()))
    for assignment in rows:
        tasks.append(assignment.task_id)
        for topic, partition in assignment.partitions:
            if not is_heartbeats_topic(policy, str(topic)) and not is_internal_topic(str(topic)):
                wanted[(str(topic), int(partition))] = assignment.pk
    return wanted, sorted(tasks)


def stopped_lag(flow: Flow) -> StoppedLag:
    """Read the stored positions and the source offsets of the partitions no live task holds (network only)."""
    wanted, tasks = stopped_partitions(flow)
    if not tasks:
        return StoppedLag()
    if not wanted:
        return StoppedLag(0, tasks)
    config = flow_config(flow)
    try:
        stored = stored_positions(flow, config)
        starts, ends = browse.offsets(browse.admin(flow.source), sorted(wanted))
    except (KafkaException, TimeoutError) as exc:
        log.warning("flow %s: positions or source offsets not read: %s", flow.name, exc)
        return StoppedLag(None, tasks)
    found: dict[Key, PartitionLag] = {}
    for key, task in wanted.items():
        low, high, position = starts.get(key), ends.get(key), stored.get(key)
        if low is None or high is None:
            found[key] = PartitionLag(task, position, None)
            continue
        resume = check_start(config, key[0], key[1], _position(stored, key), low, high).offset
        found[key] = PartitionLag(task, position, max(0, high - resume))
    return StoppedLag(sum(p.lag for p in found.values() if p.lag is not None), tasks, found)


def _position(stored: dict[Key, int], key: Key) -> positions.Position | None:
    return positions.Position(stored[key], stored[key]) if key in stored else None


def stored_positions(flow: Flow, config: FlowConfig) -> dict[Key, int]:
    """The flow's stored positions (next source offset) from the target; {} before its positions topic exists."""
    topic = positions.positions_topic(flow.source.alias)
    if topic not in browse.listed_topics(browse.admin(flow.target)):
        return {}
    loaded = positions.load(position_reader_config(config, 0), topic, POSITIONS_READ_SECONDS)
    return {key: position.next_offset for key, position in loaded.items()}


def write_reports(flow: Flow, observed: StoppedLag, since: datetime) -> int:
    """Write the observed partitions into their ``PartitionReport`` rows: a row a task reported after ``since`` (it
    took the partition meanwhile) or one a live task holds is left alone; a partition never reported gets a row.
    The row keeps its counters and takes the position and lag. Returns the observed lag of the partitions a live
    task holds: while one moves, the task giving it up still reports it, and its lag must not count twice."""
    if not observed.partitions:
        return 0
    keys = list(observed.partitions)
    rows = {
        (r.topic, r.partition): r
        for r in PartitionReport.objects.filter(_among(keys), flow=flow).select_related("assignment")
    }
    held = 0
    changed: list[PartitionReport] = []
    for key, seen in observed.partitions.items():
        row = rows.get(key)
        if row is not None and holds_live_lease(row.assignment) and not flow.paused:
            held += seen.lag or 0
            continue
        if row is not None and (row.updated_at > since or holds_live_lease(row.assignment)):
            continue
        stored = row.snapshot if row is not None else compact({"replication-latency-ms": {}, "record-age-ms": {}})
        values: dict[str, Any] = dict(expand(key[0], key[1], stored))
        values["position"], values["replication-record-lag"] = seen.position, seen.lag
        snapshot = compact(values)
        if row is not None and (row.snapshot, row.assignment_id) == (snapshot, seen.task):
            continue
        changed.append(
            PartitionReport(
                flow=flow,
                assignment_id=seen.task,
                topic=key[0],
                partition=key[1],
                lag=seen.lag,
                position=seen.position,
                snapshot=snapshot,
                updated_at=since,
            )
        )
    try:
        PartitionReport.objects.bulk_create(
            changed,
            batch_size=BATCH,
            update_conflicts=True,
            unique_fields=["flow", "topic", "partition"],
            update_fields=["assignment", "lag", "position", "snapshot"],
        )
    except IntegrityError:  # the flow or the task was deleted while the offsets were read: nothing left to describe
        log.info("flow %s or one of its tasks was deleted while it was observed; its partitions are dropped", flow.pk)
    return held


def _among(keys: list[Key]) -> Q:
    topics = {topic for topic, _ in keys}
    return Q(topic__in=topics)
