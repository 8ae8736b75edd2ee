"""The failover wizard's step table: one row per step, from the plan to the failback.

A row says what the step takes (its request serializer), what it stores (its result, and the serializer that
describes it), which function runs it as a background job, how the API documents it and whether the wizard runs it
again by itself. Everything else is derived from the rows: the job's function lookup (``handler``), the API's step
actions and entry serializers (``failover/api``), and the step list the wizard's page reads (``as_json``).

The step names and labels are ``choices.Step``: the model's ``step`` field needs them below the services, which
import the model. A row's result class is the one whose ``STEP`` names it (``results.RESULTS``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from rest_framework import serializers

from controlplane.core.serializers import NoInput
from controlplane.failover.api import inputs
from controlplane.failover.api import results as r
from controlplane.failover.choices import Step
from controlplane.failover.results import RESULTS, StepResult
from controlplane.failover.services import drain, failback, offsets
from controlplane.failover.services import steps as checks
from controlplane.failover.services.machine import StepFunction

SerializerClass = type[serializers.Serializer[Any]]
# How the wizard runs a step again without a click: "always" from the moment the failover stands at it until it
# completes (the drain), "waiting" while its last result waits (a checkpoint waiting for replication), "" never.
Rerun = Literal["always", "waiting", ""]


@dataclass(frozen=True)
class WizardStep:
    """One step of the wizard: its request, its result's description, the job that runs it, its API description.
    ``handler`` is None for the plan, which is the failover's create request rather than a job."""

    step: Step
    inputs: SerializerClass
    result_serializer: SerializerClass
    handler: StepFunction | None
    doc: str
    rerun: Rerun = ""
    stops_producers: bool = False  # the step asks for the source's producers to stop (the demo's switch is shown)

    @property
    def name(self) -> str:
        return str(self.step.value)

    @property
    def label(self) -> str:
        return str(self.step.label)

    @property
    def result(self) -> type[StepResult]:
        return RESULTS[self.name]

    @property
    def takes_inputs(self) -> bool:
        return self.inputs is not NoInput

    def as_json(self) -> dict[str, Any]:
        """What the wizard's page knows of the step."""
        return {
            "name": self.name,
            "label": self.label,
            "rerun": self.rerun,
            "stops_producers": self.stops_producers,
        }


STEPS: tuple[WizardStep, ...] = (
    WizardStep(Step.PLAN, inputs.PlanInputsSerializer, r.PlanResultSerializer, None, "1. Create the failover."),
    WizardStep(
        Step.PREFLIGHT,
        inputs.PreflightSerializer,
        r.PreflightResultSerializer,
        checks.preflight_step,
        "2. Run the checks; warnings named in acknowledge pass.",
    ),
    WizardStep(
        Step.DRAIN,
        NoInput,
        r.DrainResultSerializer,
        drain.drain_step,
        "3. Planned only: poll until the flow lag is at most the threshold.",
        rerun="always",
        stops_producers=True,
    ),
    WizardStep(
        Step.FENCE,
        inputs.FenceSerializer,
        r.FenceResultSerializer,
        checks.fence_step,
        "4. Confirm the source's clients stopped; the wizard verifies it.",
        stops_producers=True,
    ),
    WizardStep(
        Step.CHECKPOINT,
        NoInput,
        r.CheckpointResultSerializer,
        offsets.checkpoint_step,
        "5. Final checkpoint and the per-partition preview.",
        rerun="waiting",
    ),
    WizardStep(
        Step.APPLY,
        inputs.ApplySerializer,
        r.ApplyResultSerializer,
        offsets.apply_step,
        "6. Write the previewed offsets into the EMPTY target groups.",
    ),
    WizardStep(
        Step.VERIFY,
        NoInput,
        r.VerifyResultSerializer,
        offsets.verify_step,
        "7. Read the committed offsets back from the target.",
    ),
    WizardStep(
        Step.FAILBACK,
        inputs.FailbackSerializer,
        r.FailbackResultSerializer,
        failback.failback_step,
        "8. Set up the flow back and its translation.",
    ),
)
BY_NAME: dict[str, WizardStep] = {step.name: step for step in STEPS}
JOBS: tuple[WizardStep, ...] = tuple(step for step in STEPS if step.handler is not None)
# Every entry a failover stores: a step's, or the abort's (an action of its own, not a step of the wizard).
RESULT_SERIALIZERS: dict[str, SerializerClass] = {step.name: step.result_serializer for step in STEPS} | {
    "abort": r.AbortResultSerializer
}


def handler(name: str) -> StepFunction:
    """The function the job of step ``name`` runs (``machine.execute`` looks it up here)."""
    function = BY_NAME[name].handler
    if function is None:
        raise KeyError(f"step {name} is not run as a job")
    return function


def as_json() -> list[dict[str, Any]]:
    """The step list the wizard's page reads, in the order the wizard walks it."""
    return [step.as_json() for step in STEPS]
