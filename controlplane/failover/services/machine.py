"""The failover state machine: which step runs next, each step as a background job, storing its result and audit.

A step runs in three moves, none of which holds a transaction across Kafka I/O:

1. ``claim`` (the web request): a conditional UPDATE moves the job from idle/finished/expired to ``queued`` with
   a fresh token, only if the failover stands at that step. One of two concurrent requests wins; the other is
   told who holds the claim (``Busy``) or where the failover really stands (``WrongStep``).
2. ``execute`` (the Celery job): ``queued`` -> ``running`` for that token, then the step's function runs with no
   transaction open (seconds to ~40 s of Kafka I/O).
3. ``finish``/``fail``: a short transaction stores the result (or the error) only while the token is still the
   job's own, so a job whose claim expired and was taken over cannot overwrite its successor.

A claim expires (``QUEUED_SECONDS`` waiting for a worker, ``RUNNING_SECONDS`` once running), so a job whose worker
was killed leaves a step that can be started again.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from controlplane.audit.services import record
from controlplane.failover.choices import STEP_ORDER, JobState, Mode, Status, Step
from controlplane.failover.models import Failover
from controlplane.failover.results import AbortResult, DrainResult, StepEntry, StepResult

User = AbstractBaseUser | AnonymousUser | None
StepFunction = Callable[[Failover, dict[str, Any]], tuple[StepResult, bool]]
QUEUED_SECONDS = 120  # no worker took the job by then: the step may be started again
RUNNING_SECONDS = 180  # the slowest step is ~40 s of Kafka calls with 10 s deadlines each; leave room
ACTIVE_JOB = (JobState.QUEUED, JobState.RUNNING)


class WrongStep(Exception):
    """The step asked for is not the failover's current one; ``failover`` shows where it stands."""

    def __init__(self, message: str, failover: Failover) -> None:
        super().__init__(message)
        self.failover = failover


class Busy(Exception):
    """A job of this failover is queued or running; ``failover`` shows it."""

    def __init__(self, failover: Failover) -> None:
        super().__init__(f"step {failover.job_step} is already {failover.job_state} (started by another request)")
        self.failover = failover


def next_step(failover: Failover, done: str) -> str:
    following = STEP_ORDER[STEP_ORDER.index(Step(done)) + 1]
    if following == Step.DRAIN and failover.mode == Mode.UNPLANNED:
        return Step.FENCE  # nothing to drain from a source that is down
    return following


def job_busy(failover: Failover) -> bool:
    """A job holds the failover: queued or running, and its claim has not expired."""
    expires = failover.job_expires_at
    return failover.job_state in ACTIVE_JOB and expires is not None and expires > timezone.now()


def claim(pk: int, step: str, inputs: dict[str, Any], user: User) -> str:
    """Queue ``step``'s job if the failover stands there and no live job holds it; returns the claim's token."""
    now, token = timezone.now(), uuid.uuid4().hex
    free = ~Q(job_state__in=ACTIVE_JOB) | Q(job_expires_at__lt=now) | Q(job_expires_at__isnull=True)
    claimed = Failover.objects.filter(free, pk=pk, status=Status.ACTIVE, step=step).update(
        job_state=JobState.QUEUED,
        job_step=step,
        job_token=token,
        job_inputs=inputs,
        job_by=user if isinstance(user, AbstractBaseUser) else None,
        job_queued_at=now,
        job_started_at=None,
        job_finished_at=None,
        job_expires_at=now + timedelta(seconds=QUEUED_SECONDS),
        job_error="",
        updated_at=now,
    )
    if claimed == 1:
        return token
    failover = Failover.objects.get(pk=pk)
    if failover.status == Status.ACTIVE and job_busy(failover):
        raise Busy(failover)
    raise WrongStep(f"the failover is {failover.get_status_display().lower()} at step {failover.step}", failover)


def execute(pk: int, token: str, handler: Callable[[str], StepFunction]) -> str:
    """The job: start the claim, run the step (``handler(step)``, see ``failover.steps``) outside any transaction,
    store what came out. Returns the outcome."""
    now = timezone.now()
    started = Failover.objects.filter(pk=pk, job_token=token, job_state=JobState.QUEUED).update(
        job_state=JobState.RUNNING, job_started_at=now, job_expires_at=now + timedelta(seconds=RUNNING_SECONDS)
    )
    if started != 1:
        return "stale"  # the claim expired and was taken over, or the job was delivered twice
    failover = Failover.objects.select_related("source", "target", "job_by").get(pk=pk)
    function = handler(failover.job_step)
    try:
        result, complete = function(failover, dict(failover.job_inputs))
    except Exception as exc:  # any failure of the step is stored for the operator, not lost in a log
        return "failed" if fail(pk, token, f"{type(exc).__name__}: {exc}") else "stale"
    return "succeeded" if finish(pk, token, result, complete) else "stale"


def finish(pk: int, token: str, result: StepResult, complete: bool) -> bool:
    """Store the step's result and advance if it is complete, only while ``token`` still holds the claim."""
    with transaction.atomic():
        failover = Failover.objects.select_for_update(of=("self",)).select_related("job_by").get(pk=pk)
        if failover.job_token != token or failover.job_state != JobState.RUNNING:
            return False
        step, user, inputs = failover.job_step, failover.job_by, failover.job_inputs
        entry = store(failover, step, inputs, result, user, complete)
        if complete:
            _advance(failover, step)
        _finished(failover, JobState.SUCCEEDED, "")
        failover.save()
        # A step that is polled while it waits (drain, catching up) is audited when it starts and when it ends.
        if complete or not result.polling or entry.attempts == 1:
            record(user, f"failover.{step}", failover, before={"inputs": inputs}, after=_audited(result, complete))
    return True


def fail(pk: int, token: str, error: str) -> bool:
    """Store the job's error (the step stays where it is and can be started again), if the claim is still its own."""
    with transaction.atomic():
        failover = Failover.objects.select_for_update(of=("self",)).select_related("job_by").get(pk=pk)
        if failover.job_token != token or failover.job_state not in ACTIVE_JOB:
            return False
        _finished(failover, JobState.FAILED, error[:2000])
        failover.save()
        record(
            failover.job_by,
            f"failover.{failover.job_step}",
            failover,
            before={"inputs": failover.job_inputs},
            after={"complete": False, "error": failover.job_error},
        )
    return True


def _finished(failover: Failover, state: str, error: str) -> None:
    failover.job_state, failover.job_error = state, error
    failover.job_finished_at, failover.job_expires_at = timezone.now(), None


def store(
    failover: Failover, step: str, inputs: dict[str, Any], result: StepResult, user: User, complete: bool
) -> StepEntry:
    by = user.get_username() if isinstance(user, AbstractBaseUser) else ""
    previous = failover.entry(step)
    attempts = (previous.attempts if previous is not None else 0) + 1
    entry = StepEntry(result, inputs, by, timezone.now().isoformat(), complete, attempts)
    failover.steps = {**failover.steps, step: entry.as_json()}
    return entry


def _advance(failover: Failover, done: str) -> None:
    following = next_step(failover, done)
    if following == Step.FENCE and done == Step.PREFLIGHT:
        reason = "unplanned: the source is down, there is nothing to drain"
        skipped = StepEntry(DrainResult(reason=reason), at=timezone.now().isoformat(), complete=True, skipped=True)
        failover.steps = {**failover.steps, Step.DRAIN: skipped.as_json()}
    failover.step = following
    if following == Step.DONE:
        failover.status = Status.COMPLETED


def abort(pk: int, reason: str, user: User) -> Failover:
    """Stop the failover where it is. Refused (``Busy``) while a step's job holds it: the operator aborts once the
    job has ended, so a step is never cut off halfway through its writes."""
    with transaction.atomic():
        failover = Failover.objects.select_for_update().get(pk=pk)
        if failover.status != Status.ACTIVE:
            raise WrongStep(f"the failover is already {failover.get_status_display().lower()}", failover)
        if job_busy(failover):
            raise Busy(failover)
        failover.status = Status.ABORTED
        store(failover, "abort", {"reason": reason}, AbortResult(at_step=failover.step), user, True)
        failover.save()
        record(user, "failover.abort", failover, before={"step": failover.step}, after={"reason": reason})
    return failover


def set_drain_threshold(pk: int, threshold: int, user: User) -> Failover:
    """Change the lag the drain waits for, while the failover has not passed the drain; the next poll uses it."""
    with transaction.atomic():
        failover = Failover.objects.select_for_update().get(pk=pk)
        if failover.status != Status.ACTIVE or failover.step not in (Step.PREFLIGHT, Step.DRAIN):
            raise WrongStep(
                f"the failover is {failover.get_status_display().lower()} at step {failover.step}: "
                "the drain threshold can only change before the drain completes",
                failover,
            )
        before = failover.drain_threshold
        failover.drain_threshold = threshold
        failover.save(update_fields=["drain_threshold", "updated_at"])
        record(
            user,
            "failover.drain_threshold",
            failover,
            before={"drain_threshold": before},
            after={"drain_threshold": threshold},
        )
    return failover


def _audited(result: StepResult, complete: bool) -> dict[str, Any]:
    return {"complete": complete, "result": result.as_json()}
