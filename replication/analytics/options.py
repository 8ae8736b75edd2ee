"""The options of the analytics jobs beyond the window: JobOptions' fields, each declared with the jobs that take it,
its bounds and its default (`Option`). OPTIONS lists them all.

The one definition of a job option: run_job checks what it is given against it, the CLI derives its flags from it,
and the control plane checks a report's parameters with it before the run is queued. Pure Python, no Spark, so a
process that only validates never loads PySpark.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, get_type_hints

from replication.mm2.policy import PolicyError, validate_alias

JOB_NAMES = ("latency", "topology", "audit")
MAX_FLOWS = 1000
_FLOW = re.compile(r"^([^>]+)->([^>]+)$")  # aliases hold no '>', so a flow name splits at its one "->"


class OptionError(ValueError):
    """A job option that is unknown to the job or malformed; the message starts with the option's name."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"{name}: {reason}")
        self.option = name
        self.reason = reason


@dataclass(frozen=True)
class Option:
    """A JobOptions field: the jobs that take it, what it means, and the values it takes."""

    help: str
    jobs: tuple[str, ...]
    minimum: float | None = None
    maximum: float | None = None
    name: str = ""  # JobOptions' field, filled in by OPTIONS ...
    kind: str = ""  # ... and its kind, from the annotation: int, float, or flows (a list of `source->target`)
    default: Any = None


def _option(
    default: Any, help: str, jobs: tuple[str, ...], minimum: float | None = None, maximum: float | None = None
) -> Any:
    return field(default=default, metadata={"option": Option(help, jobs, minimum, maximum)})


@dataclass(frozen=True)
class JobOptions:
    """Settings beyond the window; each has a CLI flag of the same name (`window_minutes`: `--window-minutes`)."""

    flows: tuple[str, ...] | None = _option(
        None, "configured flows, `source->target` (default: those registered in the lake)", ("topology",)
    )
    window_minutes: int = _option(10, "tumbling window of record time (minutes)", ("audit",), minimum=1, maximum=1440)
    late_after_ms: int = _option(
        60_000,
        "acknowledged this long after its window ended counts as late (ms)",
        ("audit",),
        minimum=0,
        maximum=24 * 3_600_000,
    )
    dead_after: float = _option(
        5.0, "heartbeat intervals without a heartbeat before a link is dead", ("topology",), minimum=1, maximum=10_000
    )
    lookback_minutes: int = _option(
        60,
        "facts acknowledged this long before `since` tell what was covered already (minutes)",
        ("audit",),
        minimum=0,
        maximum=7 * 24 * 60,
    )
    collection_lag_s: float = _option(
        60.0,
        "how far heartbeat arrivals may trail the window end (s; the collector reads in passes)",
        ("topology",),
        minimum=0,
        maximum=86_400,
    )


def _options() -> dict[str, Option]:
    hints = get_type_hints(JobOptions)
    kinds = {int: "int", float: "float"}
    return {
        f.name: dataclasses.replace(
            f.metadata["option"], name=f.name, kind=kinds.get(hints[f.name], "flows"), default=f.default
        )
        for f in dataclasses.fields(JobOptions)
    }


OPTIONS: dict[str, Option] = _options()  # JobOptions field -> its declaration, in JobOptions' order


def declared(job: str) -> dict[str, Option]:
    """The options `job` takes, by name; ValueError for a job that does not exist."""
    if job not in JOB_NAMES:
        raise ValueError(f"unknown job {job!r}; one of {', '.join(JOB_NAMES)}")
    return {name: option for name, option in OPTIONS.items() if job in option.jobs}


def validate(job: str, values: Mapping[str, object]) -> dict[str, Any]:
    """`values` checked against the options `job` declares, floats as floats; OptionError names the first wrong one.

    Options left out keep their defaults; nothing the job does not declare gets through.
    """
    allowed = declared(job)
    checked: dict[str, Any] = {}
    for name, value in values.items():
        option = allowed.get(name)
        if option is None:
            takes = f"its options are {', '.join(allowed)}" if allowed else "it takes none"
            raise OptionError(name, f"not an option of the {job} job ({takes})")
        checked[name] = _check(option, value)
    return checked


def job_options(job: str, values: Mapping[str, object]) -> JobOptions:
    return JobOptions(**validate(job, values))


def _check(option: Option, value: object) -> Any:
    if option.kind == "flows":
        return _flows(option.name, value)
    # bool is an int to Python, never to a user: `true` is not a window length
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or (option.kind == "int" and isinstance(value, float))
    ):
        raise OptionError(option.name, f"must be {'an integer' if option.kind == 'int' else 'a number'}")
    if not math.isfinite(value):
        raise OptionError(option.name, "must be a finite number")
    if option.minimum is not None and value < option.minimum:
        raise OptionError(option.name, f"must be at least {option.minimum:g}")
    if option.maximum is not None and value > option.maximum:
        raise OptionError(option.name, f"must be at most {option.maximum:g}")
    return float(value) if option.kind == "float" else value


def _flows(name: str, value: object) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list | tuple) or not all(isinstance(item, str) for item in value):
        raise OptionError(name, "must be a list of flow names, `source->target`")
    if len(value) > MAX_FLOWS:
        raise OptionError(name, f"{len(value)} flows; at most {MAX_FLOWS} are allowed")
    for item in value:
        match = _FLOW.match(item)
        if match is None:
            raise OptionError(name, f"{item!r} is not a flow name, `source->target`")
        try:
            for alias in match.groups():
                validate_alias(alias, "")
        except PolicyError as exc:
            raise OptionError(name, str(exc).removeprefix("alias: ")) from None
    return tuple(value)
