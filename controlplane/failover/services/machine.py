"""The failover state machine: which step runs next, storing each step's inputs and result, and the audit record.

A step runs under a row lock, so two browsers pressing the same button run it once after the other; the second
sees the step already done and is refused with the step the failover is really at.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction
from django.utils import timezone

from controlplane.audit.services import record
from controlplane.failover.choices import STEP_ORDER, Mode, Status, Step
from controlplane.failover.models import Failover

User = AbstractBaseUser | AnonymousUser | None
StepFunction = Callable[[Failover, dict[str, Any]], tuple[dict[str, Any], bool]]


class WrongStep(Exception):
    """The step asked for is not the failover's current one."""


def next_step(failover: Failover, done: str) -> str:
    following = STEP_ORDER[STEP_ORDER.index(Step(done)) + 1]
    if following == Step.DRAIN and failover.mode == Mode.UNPLANNED:
        return Step.FENCE  # nothing to drain from a source that is down
    return following


def run(pk: int, step: str, inputs: dict[str, Any], user: User, function: StepFunction) -> Failover:
    """Run ``function`` for ``step`` if the failover stands there; advance when it says the step is complete."""
    with transaction.atomic():
        failover = Failover.objects.select_for_update().select_related("source", "target").get(pk=pk)
        if failover.status != Status.ACTIVE or failover.step != step:
            raise WrongStep(f"the failover is {failover.get_status_display().lower()} at step {failover.step}")
        result, complete = function(failover, inputs)
        store(failover, step, inputs, result, user, complete)
        if complete:
            _advance(failover, step)
        failover.save()
        # A step that is polled while it waits (drain, catching up) is audited when it starts and when it ends.
        if complete or not result.get("waiting") or failover.steps[step]["attempts"] == 1:
            record(user, f"failover.{step}", failover, before={"inputs": inputs}, after=_audited(result, complete))
    return failover


def store(failover: Failover, step: str, inputs: dict[str, Any], result: dict[str, Any], user: User,
          complete: bool) -> None:  # fmt: skip
    by = user.get_username() if isinstance(user, AbstractBaseUser) else ""
    attempts = int((failover.steps.get(step) or {}).get("attempts", 0)) + 1
    entry = {"inputs": inputs, "result": result, "by": by, "at": timezone.now().isoformat(), "complete": complete,
             "attempts": attempts}  # fmt: skip
    failover.steps = {**failover.steps, step: entry}


def _advance(failover: Failover, done: str) -> None:
    following = next_step(failover, done)
    if following == Step.FENCE and done == Step.PREFLIGHT:
        skipped = {"skipped": True, "result": {"reason": "unplanned: the source is down, there is nothing to drain"}}
        failover.steps = {**failover.steps, Step.DRAIN: skipped}
    failover.step = following
    if following == Step.DONE:
        failover.status = Status.COMPLETED


def abort(pk: int, reason: str, user: User) -> Failover:
    with transaction.atomic():
        failover = Failover.objects.select_for_update().get(pk=pk)
        if failover.status != Status.ACTIVE:
            raise WrongStep(f"the failover is already {failover.get_status_display().lower()}")
        failover.status = Status.ABORTED
        store(failover, "abort", {"reason": reason}, {"at_step": failover.step}, user, True)
        failover.save()
        record(user, "failover.abort", failover, before={"step": failover.step}, after={"reason": reason})
    return failover


def _audited(result: dict[str, Any], complete: bool) -> dict[str, Any]:
    return {"complete": complete, "result": result}
