"""Which function runs each wizard step (the job looks it up by the step's name)."""

from __future__ import annotations

from typing import Any

from controlplane.failover.services import drain, failback, machine, offsets, steps

_FUNCTIONS: dict[str, machine.StepFunction] = {
    "preflight": steps.preflight_step,
    "drain": drain.drain_step,
    "fence": steps.fence_step,
    "checkpoint": offsets.checkpoint_step,
    "apply": offsets.apply_step,
    "verify": offsets.verify_step,
}
STEPS = (*_FUNCTIONS, "failback")


def step_function(step: str, user: machine.User) -> machine.StepFunction:
    if step == "failback":
        return lambda failover, inputs: failback.failback_step(failover, inputs, _user(user))
    return _FUNCTIONS[step]


def _user(user: machine.User) -> Any:
    return user if user is not None and user.is_authenticated else None
