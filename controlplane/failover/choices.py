"""Modes, steps and statuses of a failover, in the order the wizard walks them."""

from __future__ import annotations

from django.db import models


class Mode(models.TextChoices):
    PLANNED = "planned", "Planned: both clusters up, drain then switch"
    UNPLANNED = "unplanned", "Unplanned: the source is down"
    FAILBACK = "failback", "Failback: return to the original cluster"


class Step(models.TextChoices):
    PLAN = "plan", "Plan"
    PREFLIGHT = "preflight", "Pre-flight"
    DRAIN = "drain", "Drain"
    FENCE = "fence", "Fence"
    CHECKPOINT = "checkpoint", "Final checkpoint"
    APPLY = "apply", "Apply"
    VERIFY = "verify", "Verify"
    FAILBACK = "failback", "Failback"
    DONE = "done", "Done"


class Status(models.TextChoices):
    ACTIVE = "active", "In progress"
    COMPLETED = "completed", "Completed"
    ABORTED = "aborted", "Aborted"


class JobState(models.TextChoices):
    """Where the background job of a step stands. ``queued`` and ``running`` hold the claim until it expires."""

    IDLE = "idle", "Idle: no step has been started"
    QUEUED = "queued", "Queued: waiting for a worker"
    RUNNING = "running", "Running on a worker"
    SUCCEEDED = "succeeded", "Succeeded: the result is stored with the step"
    FAILED = "failed", "Failed: the error is stored with the job"


class Check(models.TextChoices):
    """Outcome of one pre-flight or fence check: a failure blocks, a warning needs an acknowledgement."""

    PASS = "pass", "Pass"
    INFO = "info", "Info"
    WARN = "warn", "Warning"
    FAIL = "fail", "Fail"


STEP_ORDER = list(Step)  # the order the wizard walks them in
