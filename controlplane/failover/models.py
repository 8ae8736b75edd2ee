"""A failover: which consumer groups move from which cluster to which, and where the wizard stands."""

from __future__ import annotations

from typing import cast

from django.conf import settings
from django.db import models

from controlplane.failover.choices import JobState, Mode, Status, Step
from controlplane.failover.results import R, StepEntry


class Failover(models.Model):
    """A resumable state machine: ``step`` is the step to run next; ``steps`` keeps each run step's inputs and
    result (``{step: StepEntry}``, see ``results``), so a reload or another browser picks up where it was."""

    mode = models.CharField(max_length=16, choices=Mode.choices)
    source = models.ForeignKey("clusters.Cluster", on_delete=models.PROTECT, related_name="failovers_from")
    target = models.ForeignKey("clusters.Cluster", on_delete=models.PROTECT, related_name="failovers_to")
    groups = models.JSONField(help_text="consumer group ids to move")
    dry_run = models.BooleanField(default=False, help_text="run every step without changing anything")
    drain_threshold = models.PositiveIntegerField(default=0, help_text="records of flow lag the drain waits for")
    step = models.CharField(max_length=16, choices=Step.choices, default=Step.PREFLIGHT)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    steps = models.JSONField(default=dict)
    # The step's background job. Claimed by a conditional UPDATE (idle/finished/expired -> queued) that sets a new
    # token; the worker moves queued -> running and stores its result only while the token is still its own.
    job_state = models.CharField(max_length=16, choices=JobState.choices, default=JobState.IDLE)
    job_step = models.CharField(max_length=16, blank=True, default="")
    job_token = models.CharField(max_length=32, blank=True, default="")
    job_inputs = models.JSONField(default=dict, blank=True)
    job_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    job_queued_at = models.DateTimeField(null=True, blank=True)
    job_started_at = models.DateTimeField(null=True, blank=True)
    job_finished_at = models.DateTimeField(null=True, blank=True)
    job_expires_at = models.DateTimeField(null=True, blank=True, help_text="a claim not finished by then is free")
    job_error = models.TextField(blank=True, default="")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="failovers"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.mode} failover {self.source}->{self.target} ({', '.join(self.groups)})"

    def entry(self, step: str) -> StepEntry | None:
        """The stored entry of a step that ran (or was skipped), else None."""
        stored = self.steps.get(step)
        return StepEntry.from_json(step, stored) if stored is not None else None

    @property
    def entries(self) -> dict[str, StepEntry]:
        """Every stored step's entry, by step name."""
        return {step: StepEntry.from_json(step, stored) for step, stored in self.steps.items()}

    def result(self, kind: type[R]) -> R:
        """The stored result of the step ``kind`` belongs to, or an empty one (every field at its default) if that
        step has not run."""
        entry = self.entry(kind.STEP)
        return kind() if entry is None else cast(R, entry.result)  # RESULTS maps kind.STEP to kind
