"""Steps 5 to 7: the final checkpoint and the per-partition preview, applying it to the target, reading it back.

The preview is stored with the failover, and apply writes exactly what it showed: what the operator approved is
what happens. Apply writes only into EMPTY groups, never moves an offset backwards unless told to, and does
nothing at all in a dry run.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from confluent_kafka import KafkaException, TopicPartition

from controlplane.failover.choices import Mode
from controlplane.failover.models import Failover
from controlplane.failover.results import (
    ApplyResult,
    CheckpointResult,
    PartitionPlan,
    RpoEstimate,
    VerifyResult,
    VerifyRow,
)
from controlplane.failover.services import context, kafka, mm2, translate
from controlplane.failover.services.preflight import rpo_estimate
from controlplane.flows.services import cluster_config
from controlplane.monitoring.services import readers
from replication.config import FlowConfig
from replication.emitters.checkpoints import CheckpointEmitter
from replication.offsets.checkpoints import GroupOffset
from replication.offsets.groupoffsets import ConsumerGroups

Wanted = dict[str, dict[tuple[str, int], int]]  # group -> (target topic, partition) -> offset


def checkpoint_step(failover: Failover, inputs: dict[str, Any]) -> tuple[CheckpointResult, bool]:
    """Emit a final checkpoint, then plan every partition. Planned moves wait until every plan is exact."""
    flows = context.flows(failover)
    forward, inverse = flows.configs()
    up, error = kafka.reachable(failover.source)
    if forward is None and failover.mode != Mode.FAILBACK:
        pair = mm2.records(failover)
        if pair is not None:
            return _from_mm2(failover, pair, up, error)
    if up:
        written = final_checkpoint(forward, failover.groups) if forward is not None else 0
        plans = _planned(failover, forward, inverse)
    else:
        written, plans = 0, _from_checkpoints(failover, forward)
    inexact = tuple(f"{p.group} {p.topic}-{p.partition}" for p in plans if not p.exact)
    result = CheckpointResult(
        checkpoints_written=written,
        source_reachable=up,
        source_error=error,
        preview=tuple(plans),
        inexact=inexact,
        rpo=_rpo(failover, flows.forward, up),
    )
    if not plans:
        return replace(result, error="the groups have no committed offsets to move"), False
    waiting = bool(inexact) and failover.mode != Mode.UNPLANNED
    return replace(result, waiting=waiting), not waiting


def _from_mm2(failover: Failover, pair: FlowConfig, up: bool, error: str) -> tuple[CheckpointResult, bool]:
    """MirrorMaker 2 replicates the groups: its offset syncs by its own rule (source up), else its checkpoints.
    Its syncs are sparse, so a plan re-reads up to the records since the sync: it waits only for a partition no
    sync covers."""
    if up:
        found = mm2.plans(failover, pair)
        plans, precision = found.plans, found.precision
    else:
        plans, precision = _from_checkpoints(failover, pair), "MirrorMaker 2's last checkpoints: re-reads unknown"
    uncovered = tuple(f"{p.group} {p.topic}-{p.partition}" for p in plans if p.downstream_offset is None)
    result = CheckpointResult(
        source_reachable=up,
        source_error=error,
        preview=tuple(plans),
        inexact=tuple(f"{p.group} {p.topic}-{p.partition}" for p in plans if not p.exact),
        rpo=_rpo(failover, None, up),
        precision=precision,
    )
    if not plans:
        return replace(result, error="the groups have no committed offsets to move"), False
    waiting = bool(uncovered) and failover.mode != Mode.UNPLANNED
    return replace(result, waiting=waiting), not waiting


def final_checkpoint(flow: FlowConfig, groups: list[str]) -> int:
    """One round of the flow's checkpoint emitter for exactly these groups; returns how many partitions it wrote."""
    scoped = flow.replace(groups=tuple(re.escape(g) for g in groups), groups_exclude=())
    emitter = CheckpointEmitter(scoped)
    try:
        emitter.run_once()
    finally:
        emitter.close()
    return sum(len(partitions) for group, partitions in emitter.last.items() if group in groups)


def _planned(failover: Failover, forward: FlowConfig | None, inverse: FlowConfig | None) -> list[PartitionPlan]:
    groups = kafka.groups(failover.source)
    planner = translate.Planner(forward, inverse)
    try:
        return [p for group in failover.groups for p in planner.plan(group, groups.committed(group))]
    finally:
        planner.close()


def _from_checkpoints(failover: Failover, forward: FlowConfig | None) -> list[PartitionPlan]:
    if forward is None:
        return []
    latest = readers.latest_checkpoints(cluster_config(failover.target), failover.source.alias)
    policy = forward.policy()
    return [p for g in failover.groups for p in translate.from_checkpoints(g, latest.get(g, {}), policy.upstream_topic)]


def _rpo(failover: Failover, flow: Any, source_up: bool) -> RpoEstimate:
    estimate = rpo_estimate(flow)
    if source_up and failover.mode != Mode.UNPLANNED:
        # Fenced and caught up: every record the groups will read is in the target.
        return replace(estimate, records=0, latency_p99_ms=None)
    return replace(estimate, note="records written to the source and not replicated before it went down")


def apply_step(failover: Failover, inputs: dict[str, Any]) -> tuple[ApplyResult, bool]:
    """Write the previewed offsets into the target groups (all or nothing per check, before any write)."""
    rows = failover.result(CheckpointResult).preview
    wanted = _wanted(rows)
    groups = kafka.groups(failover.target)
    states = groups.describe(failover.groups)
    busy = [f"{s.group} is {s.state} with {len(s.members)} members" for s in states.values() if not s.writable]
    if busy:
        return ApplyResult(error=f"not EMPTY on the target: {'; '.join(busy)}"), False
    backwards = _backwards(groups, wanted)
    if backwards and not inputs.get("override_backwards"):
        shown = "; ".join(backwards[:10])
        return ApplyResult(error=f"would move offsets backwards: {shown}", backwards=tuple(backwards)), False
    if failover.dry_run:
        return ApplyResult(dry_run=True, would_write=_listed(wanted), backwards=tuple(backwards)), True
    refused = {
        g: groups.alter(g, [TopicPartition(t, p, o) for (t, p), o in sorted(offs.items())])
        for g, offs in wanted.items()
    }
    errors = [f"{g} {t}-{p}: {e}" for g, r in refused.items() for (t, p), e in sorted(r.items())]
    if errors:
        return ApplyResult(error="the broker refused: " + "; ".join(errors), written=_listed(wanted)), False
    return ApplyResult(written=_listed(wanted), backwards=tuple(backwards), override_backwards=bool(backwards)), True


def _wanted(plans: tuple[PartitionPlan, ...]) -> Wanted:
    wanted: Wanted = {}
    for plan in plans:
        if plan.downstream_offset is not None:
            wanted.setdefault(plan.group, {})[(plan.target_topic, plan.partition)] = plan.downstream_offset
    return wanted


def _backwards(groups: ConsumerGroups, wanted: Wanted) -> list[str]:
    found = []
    for group, offsets in wanted.items():
        current = groups.committed(group)
        for tp, offset in sorted(offsets.items()):
            if tp in current and offset < current[tp]:
                found.append(f"{group} {tp[0]}-{tp[1]}: {current[tp]} -> {offset}")
    return found


def _listed(wanted: Wanted) -> tuple[GroupOffset, ...]:
    return tuple(GroupOffset(g, t, p, o) for g, offs in wanted.items() for (t, p), o in sorted(offs.items()))


def verify_step(failover: Failover, inputs: dict[str, Any]) -> tuple[VerifyResult, bool]:
    """Read the committed offsets back from the target and compare them with what was written."""
    wanted = _wanted(failover.result(CheckpointResult).preview)
    groups = kafka.groups(failover.target)
    rows: list[VerifyRow] = []
    ok = True
    for group, offsets in wanted.items():
        try:
            current = groups.committed(group)
        except KafkaException as exc:
            return VerifyResult(error=f"{group}: offsets not read back: {exc}"), False
        for (topic, partition), offset in sorted(offsets.items()):
            found = current.get((topic, partition))
            match = failover.dry_run or found == offset
            ok = ok and match
            rows.append(VerifyRow(group, topic, partition, offset, found, match))
    return VerifyResult(rows=tuple(rows), checklist=checklist(failover, rows), dry_run=failover.dry_run), ok


def checklist(failover: Failover, rows: list[VerifyRow]) -> tuple[str, ...]:
    topics = sorted({r.topic for r in rows})
    target = failover.target
    return (
        f"Point the consumers of {', '.join(failover.groups)} at {target} ({target.bootstrap_servers}).",
        f"Have them read {', '.join(topics)}: the names of the same records in {target}.",
        "Start them: they resume at the committed offsets verified above.",
        f"Point the producers at {target}, or keep them on the source if it stays the primary for writes.",
        "Keep the groups' old consumers on the source stopped, so no one reads the same records twice.",
    )
