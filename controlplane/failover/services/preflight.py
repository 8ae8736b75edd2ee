"""Pre-flight checks: each one passes, informs, warns (needs an acknowledgement) or fails (blocks), with a reason.

Planned and failback moves need both clusters; an unplanned one expects the source to be down, so what cannot be
checked there is a warning to acknowledge instead of a failure.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from confluent_kafka import KafkaException
from confluent_kafka.admin import ResourceType

from controlplane.failover.choices import Check, Mode
from controlplane.failover.models import Failover
from controlplane.failover.results import CheckResult as Result
from controlplane.failover.results import RpoEstimate
from controlplane.failover.services import kafka, mm2
from controlplane.failover.services.context import Flows
from controlplane.flows.models import Flow
from controlplane.flows.services import cluster_config, flow_config
from controlplane.monitoring.choices import Health
from controlplane.monitoring.models import FlowSample
from controlplane.monitoring.services import readers
from controlplane.monitoring.services.health import health, totals
from controlplane.orchestration.services.status import flow_status
from replication.config import FlowConfig
from replication.mm2.filters import GroupFilter

HEARTBEAT_MAX_AGE_SECONDS = 30.0


@dataclass(frozen=True)
class Inputs:
    failover: Failover
    flows: Flows
    source_up: bool
    source_error: str
    target_error: str = ""  # empty when the target answers
    mm2: FlowConfig | None = None  # no Mirrorplane flow, MirrorMaker 2's records for the pair (services.mm2)

    @property
    def unplanned(self) -> bool:
        return self.failover.mode == Mode.UNPLANNED


def run(failover: Failover, flows: Flows) -> list[Result]:
    up, error = kafka.reachable(failover.source)
    # The target is asked once, up front, like the source: four checks read it, and against an unreachable target
    # each waited out its own timeout (40 s in all) to fail with librdkafka's vaguest message.
    target_up, target_error = kafka.reachable(failover.target)
    pair = mm2.records(failover) if flows.forward is None and failover.mode != Mode.FAILBACK else None
    inputs = Inputs(failover, flows, up, error, "" if target_up else target_error or "no broker answered", pair)
    checks: list[Callable[[Inputs], Result]] = [
        source_reachable,
        flow_healthy,
        heartbeats_fresh,
        checkpoints_exist,
        target_groups_empty,
        acls_on_target,
        rpo,
    ]
    if failover.mode == Mode.FAILBACK:
        checks.insert(2, return_flow)
    return [_guarded(check, inputs) for check in checks]


_READ_THE_TARGET = ("heartbeats_fresh", "checkpoints_exist", "target_groups_empty", "acls_on_target")


def _guarded(check: Callable[[Inputs], Result], inputs: Inputs) -> Result:
    name = check.__name__
    if inputs.target_error and name in _READ_THE_TARGET:
        detail = f"could not check: the target {inputs.failover.target} does not answer: {inputs.target_error}"
        return Result(name, name.replace("_", " "), Check.FAIL, detail)
    try:
        return check(inputs)
    except (KafkaException, TimeoutError) as exc:
        return Result(name, name.replace("_", " "), Check.FAIL, f"could not check: {str(exc) or 'no answer in time'}")


def source_reachable(i: Inputs) -> Result:
    label = f"Source {i.failover.source} reachable"
    if i.source_up:
        return Result("source_reachable", label, Check.PASS, "the source cluster answers")
    status = Check.INFO if i.unplanned else Check.FAIL
    hint = "" if i.unplanned else "; choose an unplanned failover if it is down"
    return Result("source_reachable", label, status, f"{i.source_error}{hint}")


def flow_healthy(i: Inputs) -> Result:
    flow = i.flows.forward
    label = f"Flow {i.failover.source}->{i.failover.target} healthy"
    if flow is None and i.mm2 is not None:
        detail = (
            "no Mirrorplane flow: MirrorMaker 2's offset syncs and checkpoints for the pair are the translation; "
            "its health is not known here"
        )
        return Result("flow_healthy", label, Check.WARN, detail)
    if flow is None:
        return Result("flow_healthy", label, Check.FAIL, "no flow replicates from the source to the target")
    state = health(flow_status(flow))
    if state == Health.HEALTHY:
        return Result("flow_healthy", label, Check.PASS, "every task is running")
    status = Check.WARN if i.unplanned or state in (Health.LAGGING, Health.STARTING, Health.PAUSED) else Check.FAIL
    return Result("flow_healthy", label, status, f"the flow is {state}")


def return_flow(i: Inputs) -> Result:
    """A failback reads copies made by the flow target->source; its offset syncs translate them back."""
    flow = i.flows.inverse
    label = f"Flow {i.failover.target}->{i.failover.source} (the copies to fail back from)"
    if flow is None:
        return Result("return_flow", label, Check.FAIL, "no such flow: there is nothing to translate back")
    state = health(flow_status(flow))
    status = Check.PASS if state == Health.HEALTHY else Check.WARN
    return Result("return_flow", label, status, f"the flow is {state}; its offset syncs are the translation")


def heartbeats_fresh(i: Inputs) -> Result:
    flow, label = i.flows.forward, f"Heartbeats from {i.failover.source} fresh in {i.failover.target}"
    if flow is None or not flow.emit_heartbeats_enabled:
        return Result("heartbeats_fresh", label, Check.WARN, "the flow emits no heartbeats")
    topic = flow_config(flow).policy().format_remote_topic(flow.source.alias, "heartbeats")
    beat = readers.newest_heartbeat(cluster_config(i.failover.target), topic)
    if beat is None:
        return Result("heartbeats_fresh", label, Check.WARN if i.unplanned else Check.FAIL, f"no heartbeat in {topic}")
    seconds = time.time() - beat.timestamp / 1000
    limit = max(HEARTBEAT_MAX_AGE_SECONDS, 5 * flow.emit_heartbeats_interval_seconds)
    if seconds <= limit:
        return Result("heartbeats_fresh", label, Check.PASS, f"newest heartbeat {seconds:.0f} s old in {topic}")
    status = Check.WARN if i.unplanned else Check.FAIL
    return Result("heartbeats_fresh", label, status, f"newest heartbeat is {seconds:.0f} s old (limit {limit:.0f} s)")


def checkpoints_exist(i: Inputs) -> Result:
    flow, groups, label = i.flows.forward, i.failover.groups, "Checkpoints exist for the groups"
    if i.failover.mode == Mode.FAILBACK and i.flows.inverse is not None:
        detail = (
            f"positions in the copies {i.flows.inverse.name} made translate back through its offset syncs; "
            "checkpoints are needed only for topics produced in the source"
        )
        return Result("checkpoints_exist", label, Check.INFO, detail)
    if flow is None and i.mm2 is None:
        return Result("checkpoints_exist", label, Check.FAIL, "no flow, so no checkpoints")
    excluded = [g for g in groups if flow is not None and not GroupFilter(flow_config(flow)).should_replicate(g)]
    if excluded:
        return Result(
            "checkpoints_exist", label, Check.FAIL, f"the flow's groups filter excludes {', '.join(excluded)}"
        )
    latest = readers.latest_checkpoints(cluster_config(i.failover.target), i.failover.source.alias)
    missing = [g for g in groups if g not in latest]
    if not missing:
        counts = ", ".join(f"{g}: {len(latest[g])} partitions" for g in groups)
        return Result("checkpoints_exist", label, Check.PASS, counts)
    # Planned: the final checkpoint step writes them. Unplanned without a source: nothing else tells the position.
    status = Check.FAIL if i.unplanned and not i.source_up else Check.WARN
    return Result("checkpoints_exist", label, status, f"no checkpoint yet for {', '.join(missing)}")


def target_groups_empty(i: Inputs) -> Result:
    label = f"Groups EMPTY on {i.failover.target}"
    states = kafka.groups(i.failover.target).describe(i.failover.groups)
    busy = [s for s in states.values() if not s.writable]
    if not busy:
        return Result("target_groups_empty", label, Check.PASS, "no member in any of the groups on the target")
    detail = "; ".join(f"{s.group} is {s.state} with {len(s.members)} members" for s in busy)
    return Result("target_groups_empty", label, Check.FAIL, f"{detail}: stop those consumers first")


def acls_on_target(i: Inputs) -> Result:
    label = f"Group ACLs on {i.failover.target}"
    target = acls_of(kafka.admin(i.failover.target), i.failover.groups)
    if target is None:
        return Result("acls_on_target", label, Check.PASS, "the target has no authorizer: every client may use groups")
    if not i.source_up:
        return Result("acls_on_target", label, Check.WARN, "the source does not answer: its ACLs cannot be compared")
    source = acls_of(kafka.admin(i.failover.source), i.failover.groups) or set()
    missing = sorted(source - target)
    if not missing:
        return Result(
            "acls_on_target", label, Check.PASS, f"{len(source)} group ACL(s) of the source exist on the target"
        )
    shown = "; ".join(f"{p} {op} {perm} on group {g}" for g, p, op, perm in missing[:5])
    return Result("acls_on_target", label, Check.FAIL, f"missing on the target: {shown}")


def acls_of(client: Any, groups: list[str]) -> set[tuple[str, str, str, str]] | None:
    found: set[tuple[str, str, str, str]] = set()
    for group in groups:
        bindings = kafka.acls(client, ResourceType.GROUP, group)
        if bindings is None:
            return None
        found |= {(group, b.principal, _named(b.operation), _named(b.permission_type)) for b in bindings}
    return found


def _named(value: Enum | str | int) -> str:
    """An ACL operation or permission type by name (``READ``, ``ALLOW``): AclBinding declares it an enum, a name or
    a number; describe_acls returns the enum."""
    return value.name if isinstance(value, Enum) else str(value)


def rpo(i: Inputs) -> Result:
    """Records that would be lost if the source vanished now: the flow's lag (last known if the source is down)."""
    estimate = rpo_estimate(i.flows.forward)
    label = "RPO estimate"
    if estimate.records is None:
        return Result("rpo", label, Check.INFO, "no lag reported by the flow yet")
    when = "now" if i.source_up else f"as last reported at {estimate.as_of}"
    latency = estimate.latency_p99_ms
    window = f", plus writes of the last {latency:.0f} ms (p99 replication latency)" if latency is not None else ""
    return Result("rpo", label, Check.INFO, f"up to {estimate.records} records {when}{window}")


def rpo_estimate(flow: Flow | None) -> RpoEstimate:
    """Records not yet replicated (the lag the tasks last reported, or the last sample of it) and the p99
    replication latency: writes younger than that may not be in the target yet."""
    if flow is None:
        return RpoEstimate()
    flow_totals = totals(flow_status(flow))
    last = FlowSample.objects.filter(flow=flow, lag__isnull=False).order_by("-at").first()
    records = flow_totals.lag if flow_totals.lag is not None else (last.lag if last else None)
    latency = (
        flow_totals.latency_p99_ms
        if flow_totals.latency_p99_ms is not None
        else (last.latency_p99_ms if last else None)
    )
    return RpoEstimate(records, last.at.isoformat() if last else None, latency)
