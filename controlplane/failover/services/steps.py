"""One function per wizard step: (failover, inputs) -> (result, complete). ``machine.execute`` runs them as
background jobs, then stores and audits what they return.

The drain is in ``drain``; steps 5 to 8 (final checkpoint and preview, apply, verify, failback) are in ``offsets``
and ``failback``.
"""

from __future__ import annotations

import time
from typing import Any

from controlplane.failover.choices import Check
from controlplane.failover.models import Failover
from controlplane.failover.results import CheckResult, FenceResult, PreflightResult
from controlplane.failover.services import context, kafka, preflight

FENCE_WINDOW_SECONDS = 3.0


def preflight_step(failover: Failover, inputs: dict[str, Any]) -> tuple[PreflightResult, bool]:
    """Complete when asked to proceed, nothing fails and every warning is acknowledged (``acknowledge`` lists
    their codes). Without ``proceed`` the checks only run, so the operator sees them before moving on."""
    checks = tuple(preflight.run(failover, context.flows(failover)))
    acknowledged = set(inputs.get("acknowledge") or [])
    failed = tuple(c.code for c in checks if c.status == Check.FAIL)
    unacknowledged = tuple(c.code for c in checks if c.status == Check.WARN and c.code not in acknowledged)
    rpo = preflight.rpo_estimate(context.flows(failover).forward)
    result = PreflightResult(checks=checks, failed=failed, unacknowledged=unacknowledged, rpo=rpo)
    return result, bool(inputs.get("proceed")) and not failed and not unacknowledged


def fence_step(failover: Failover, inputs: dict[str, Any]) -> tuple[FenceResult, bool]:
    """The operator confirms the source's producers and consumers stopped; the wizard checks it is true."""
    if not inputs.get("confirmed"):
        return FenceResult(error="confirm that producers and consumers on the source have stopped"), False
    up, error = kafka.reachable(failover.source)
    if not up:
        note = f"the source does not answer ({error}): no client can write to it or read from it either"
        checks: tuple[CheckResult, ...] = (CheckResult("source_down", "Source unreachable", Check.INFO, note),)
        return FenceResult(checks=checks, verified=False), failover.mode == "unplanned"
    checks = (_members_gone(failover), _end_offsets_still(failover))
    return FenceResult(checks=checks, verified=True), all(c.status == Check.PASS for c in checks)


def _members_gone(failover: Failover) -> CheckResult:
    states = kafka.groups(failover.source).describe(failover.groups)
    busy = [s for s in states.values() if s.members]
    label = f"Group members gone from {failover.source}"
    if not busy:
        return CheckResult("members_gone", label, Check.PASS, "no group has a member")
    detail = "; ".join(f"{s.group}: {', '.join(s.members)}" for s in busy)
    return CheckResult("members_gone", label, Check.FAIL, f"still consuming: {detail}")


def _end_offsets_still(failover: Failover) -> CheckResult:
    groups = kafka.groups(failover.source)
    partitions = sorted({tp for group in failover.groups for tp in groups.committed(group)})
    label = f"End offsets on {failover.source} stopped moving"
    before = kafka.end_offsets(failover.source, partitions)
    time.sleep(FENCE_WINDOW_SECONDS)
    after = kafka.end_offsets(failover.source, partitions)
    moving = {tp: after[tp] - before[tp] for tp in partitions if after[tp] != before[tp]}
    if not moving:
        detail = f"{len(partitions)} partitions unchanged over {FENCE_WINDOW_SECONDS:.0f} s"
        return CheckResult("end_offsets_still", label, Check.PASS, detail)
    shown = ", ".join(f"{t}-{p} +{n}" for (t, p), n in sorted(moving.items())[:5])
    return CheckResult("end_offsets_still", label, Check.FAIL, f"still written: {shown}")
