"""Jobs: start one for a slow action, run it once in a worker, store what came out, report a dead one as stale.

A job moves in three steps, none of which holds a transaction across network I/O:

1. ``start`` (the web request) inserts the job ``queued`` with its ``active_key``; the key is unique, so a second
   request for the same thing gets ``Busy`` with the job that holds it.
2. ``execute`` (the Celery task) claims it with a conditional UPDATE ``queued -> running``: of two deliveries
   (or two workers) only one runs it. The kind's function then runs with no transaction open.
3. ``execute`` stores the result or the error with another conditional UPDATE that holds only while the job is
   still ``running``: a job already reported stale keeps its error and the late result is discarded.

A job not started within ``QUEUED_SECONDS`` (no worker) or not finished within ``RUNNING_SECONDS`` of starting
(its worker died) is stale: the next read or the next start for its key marks it failed with the reason.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AbstractUser, AnonymousUser
from django.db import IntegrityError, transaction
from django.utils import timezone

from controlplane.core.permissions import has_role
from controlplane.jobs.choices import ACTIVE, JobState
from controlplane.jobs.models import Job

log = logging.getLogger(__name__)
User = AbstractBaseUser | AnonymousUser | None
QUEUED_SECONDS = 60  # no worker took the job by then: it is reported stale, and its key is free again
RUNNING_SECONDS = 60  # a check or preview makes Kafka calls bounded at ~5 s each; leave room on a busy machine
MAX_ERROR = 2000
KEEP_HOURS = 24


class JobFailed(Exception):
    """The job's function could not do its work; the message is shown to the user as the job's ``error``."""


class Busy(Exception):
    """A queued or running job already holds the key; ``job`` is that job."""

    def __init__(self, job: Job) -> None:
        super().__init__(f"a {job.kind} job for this is already {job.state}; poll it or wait for it to end")
        self.job = job


@dataclass(frozen=True)
class Kind:
    """A kind of job: the role that may start and read it, and the function that does its work."""

    name: str
    role: str
    run: Callable[[Job], dict[str, Any]]


_KINDS: dict[str, Kind] = {}


def register(kind: Kind) -> None:
    """Called from an app's ``ready()``: this app imports none of the apps whose work it runs."""
    _KINDS[kind.name] = kind


def kind_of(job: Job) -> Kind:
    return _KINDS[job.kind]


def may_read(job: Job, user: User) -> bool:
    """Whoever may start a kind of job may read such jobs; nobody reads a kind their role could not start."""
    kind = _KINDS.get(job.kind)
    return kind is not None and isinstance(user, AbstractUser) and has_role(user, kind.role)


def start(kind: str, key: str, inputs: dict[str, Any], user: User) -> Job:
    """Insert a queued job for ``key``; ``Busy`` if a live job holds the key (a stale holder is failed first)."""
    prune()
    holder: Job | None = None
    for _ in range(3):
        try:
            with transaction.atomic():
                return Job.objects.create(
                    kind=kind,
                    active_key=key,
                    inputs=inputs,
                    created_by=user if isinstance(user, get_user_model()) else None,
                    expires_at=timezone.now() + timedelta(seconds=QUEUED_SECONDS),
                )
        except IntegrityError:
            holder = Job.objects.filter(active_key=key).first()
            if holder is not None and not expire(holder):
                raise Busy(holder) from None
    assert holder is not None  # three inserts lost to holders that each ended at once: a pathological race
    raise Busy(holder)


def prune() -> int:
    """Delete the jobs that ended more than ``KEEP_HOURS`` ago (clients poll a job for seconds, not days)."""
    ended_before = timezone.now() - timedelta(hours=KEEP_HOURS)
    deleted, _ = Job.objects.filter(created_at__lt=ended_before).exclude(state__in=ACTIVE).delete()
    return deleted


def expire(job: Job) -> bool:
    """Mark a queued or running job whose time is up as failed, with the reason. True if it is (now) ended."""
    if job.state not in ACTIVE:
        return True
    now = timezone.now()
    if job.expires_at is None or job.expires_at > now:
        return False
    if job.state == JobState.QUEUED:
        reason = f"stale: no worker started the job within {QUEUED_SECONDS} s (is a Celery worker running?)"
    else:
        reason = f"stale: the worker running the job did not finish it within {RUNNING_SECONDS} s (it may have died)"
    _end(job.pk, job.state, JobState.FAILED, error=reason)
    job.refresh_from_db()
    return job.state not in ACTIVE


def refused(job: Job, reason: str) -> None:
    """The job could not be queued (the broker is down): end it at once so its key is free again."""
    _end(job.pk, JobState.QUEUED, JobState.FAILED, error=f"the job could not be queued: {reason}")
    job.refresh_from_db()


def execute(job_id: str) -> str:
    """The worker's side: claim, run the kind's function outside any transaction, store the outcome."""
    now = timezone.now()
    claimed = Job.objects.filter(pk=job_id, state=JobState.QUEUED, expires_at__gt=now).update(
        state=JobState.RUNNING, started_at=now, expires_at=now + timedelta(seconds=RUNNING_SECONDS)
    )
    if claimed != 1:
        return "stale"  # delivered twice, claimed by another worker, or reported stale already
    job = Job.objects.select_related("created_by").get(pk=job_id)
    try:
        result = _KINDS[job.kind].run(job)
    except JobFailed as exc:
        return "failed" if _end(job.pk, JobState.RUNNING, JobState.FAILED, error=str(exc)) else "stale"
    except Exception as exc:  # stored for the user rather than lost in a worker log
        log.exception("job %s (%s) failed", job.pk, job.kind)
        error = f"{type(exc).__name__}: {exc}"
        return "failed" if _end(job.pk, JobState.RUNNING, JobState.FAILED, error=error) else "stale"
    return "succeeded" if _end(job.pk, JobState.RUNNING, JobState.SUCCEEDED, result=result) else "stale"


def _end(pk: Any, was: str, state: str, *, error: str = "", result: dict[str, Any] | None = None) -> bool:
    ended = Job.objects.filter(pk=pk, state=was).update(
        state=state,
        error=error[:MAX_ERROR],
        result=result,
        inputs={},
        active_key=None,
        finished_at=timezone.now(),
        expires_at=None,
    )
    return ended == 1
