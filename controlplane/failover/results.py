"""What the wizard's steps store: each step's result as a frozen value object, and the entry around it.

``Failover.steps`` is ``{step: StepEntry.as_json()}``: the inputs the step last ran with, its result (one class per
step, ``RESULTS``), who ran it and when, whether it completed, how many times it ran and whether it was skipped.
Steps build their result with these classes, so a result holds exactly the fields declared here; the API describes
each of them field by field (``failover/api/results.py``), and a test holds the two together.

Every field has a default, so an entry stored before a field existed still reads (with the default).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, get_args, get_origin, get_type_hints

from replication.offsets.checkpoints import GroupOffset

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = TypeVar("T", bound="DataclassInstance")


@dataclass(frozen=True)
class CheckResult:
    """One pre-flight or fence check: ``status`` is a ``choices.Check`` (a failure blocks, a warning needs an
    acknowledgement)."""

    code: str
    label: str
    status: str
    detail: str


@dataclass(frozen=True)
class RpoEstimate:
    """Records that would be lost if the source vanished now, and the p99 replication latency on top of them."""

    records: int | None = None  # None: the flow reported no lag yet
    as_of: str | None = None  # ISO time of the sample the figure comes from, None: live
    latency_p99_ms: float | None = None
    note: str = ""


@dataclass(frozen=True)
class PartitionPlan:
    """Where one group resumes in the target for one partition, how that was derived, and what it costs."""

    group: str
    topic: str
    partition: int
    upstream_offset: int
    target_topic: str
    downstream_offset: int | None
    method: str
    exact: bool
    note: str = ""
    reread: int | None = None  # records the group would read a second time (None: unknown)
    skipped: int | None = None  # records the group would never read (None: unknown)


@dataclass(frozen=True)
class DrainPartition:
    """One source partition the drain measures (one the failover's groups committed on, within the flow's topics):
    its replication lag as the flow's task last reported it (None: not reported) and its end offset (None: unknown)."""

    topic: str
    partition: int
    lag: int | None
    source_end: int | None


@dataclass(frozen=True)
class DrainSample:
    """One drain check: when (epoch seconds), the lag of the groups' partitions and the sum of their source end
    offsets."""

    at: float
    lag: int | None
    source_end: int | None


@dataclass(frozen=True)
class VerifyRow:
    """An offset written into a target group, and what the target reads back."""

    group: str
    topic: str
    partition: int
    expected: int
    committed: int | None
    match: bool


@dataclass(frozen=True, kw_only=True)
class StepResult:
    """The result of one step. ``STEP`` names the step it belongs to."""

    STEP: ClassVar[str]

    @property
    def polling(self) -> bool:
        """The wizard runs the step again until it completes (the drain, a checkpoint waiting for replication)."""
        return False

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = _json(self)
        return data


@dataclass(frozen=True, kw_only=True)
class PlanResult(StepResult):
    STEP = "plan"
    created: int = 0  # the failover's id


@dataclass(frozen=True, kw_only=True)
class PreflightResult(StepResult):
    STEP = "preflight"
    checks: tuple[CheckResult, ...] = ()
    failed: tuple[str, ...] = ()  # codes of the failed checks: they block
    unacknowledged: tuple[str, ...] = ()  # codes of the warnings not acknowledged yet
    rpo: RpoEstimate = RpoEstimate()


@dataclass(frozen=True, kw_only=True)
class DrainResult(StepResult):
    STEP = "drain"
    lag: int | None = None
    initial_lag: int | None = None
    threshold: int = 0
    progress: float = 0.0
    waiting: bool = False
    trend: tuple[DrainSample, ...] = ()
    partitions: tuple[DrainPartition, ...] = ()  # the groups' partitions, the ones the figures are about
    partitions_error: str = ""  # why the groups' committed partitions could not be read this time
    lag_rate: float | None = None
    source_write_rate: float | None = None
    producers_writing: bool = False
    eta_seconds: float | None = None
    source_error: str = ""
    why: str | None = None
    reason: str = ""  # why the drain was skipped (the entry's ``skipped``)
    error: str = ""

    @property
    def polling(self) -> bool:
        return self.waiting


@dataclass(frozen=True, kw_only=True)
class FenceResult(StepResult):
    STEP = "fence"
    checks: tuple[CheckResult, ...] = ()
    verified: bool = False  # the checks ran against the source (False: it does not answer, or not confirmed)
    error: str = ""


@dataclass(frozen=True, kw_only=True)
class CheckpointResult(StepResult):
    STEP = "checkpoint"
    checkpoints_written: int = 0
    source_reachable: bool = False
    source_error: str = ""
    preview: tuple[PartitionPlan, ...] = ()
    inexact: tuple[str, ...] = ()  # "group topic-partition" of every plan that is not exact
    rpo: RpoEstimate = RpoEstimate()
    waiting: bool = False
    precision: str = ""  # how exact the records translated from allow the move to be (MM2's sparse offset syncs)
    error: str = ""

    @property
    def polling(self) -> bool:
        return self.waiting


@dataclass(frozen=True, kw_only=True)
class ApplyResult(StepResult):
    STEP = "apply"
    written: tuple[GroupOffset, ...] = ()  # the offsets written into the target groups
    would_write: tuple[GroupOffset, ...] = ()
    dry_run: bool = False
    backwards: tuple[str, ...] = ()
    override_backwards: bool = False
    error: str = ""


@dataclass(frozen=True, kw_only=True)
class VerifyResult(StepResult):
    STEP = "verify"
    rows: tuple[VerifyRow, ...] = ()
    checklist: tuple[str, ...] = ()
    dry_run: bool = False
    error: str = ""


@dataclass(frozen=True, kw_only=True)
class FailbackResult(StepResult):
    STEP = "failback"
    flow: int | None = None  # the flow back's id
    name: str = ""
    created: bool = False
    translation: str = ""
    dry_run: bool = False
    would_create: str = ""
    skipped: bool = False
    reason: str = ""
    errors: dict[str, Any] = field(default_factory=dict)  # the flow serializer's errors, when the flow is refused
    error: str = ""


@dataclass(frozen=True, kw_only=True)
class AbortResult(StepResult):
    STEP = "abort"
    at_step: str = ""


RESULTS: dict[str, type[StepResult]] = {
    kind.STEP: kind
    for kind in (
        PlanResult,
        PreflightResult,
        DrainResult,
        FenceResult,
        CheckpointResult,
        ApplyResult,
        VerifyResult,
        FailbackResult,
        AbortResult,
    )
}
R = TypeVar("R", bound=StepResult)


@dataclass(frozen=True)
class StepEntry:
    """One step in ``Failover.steps``: the inputs it last ran with (validated by the step's request serializer),
    its result, who ran it (username, '' if unknown) and when (ISO time), whether it completed, how many times it
    ran, and whether it was skipped (a drain in an unplanned failover)."""

    result: StepResult
    inputs: dict[str, Any] = field(default_factory=dict)
    by: str = ""
    at: str | None = None
    complete: bool = False
    attempts: int = 0
    skipped: bool = False

    @classmethod
    def from_json(cls, step: str, stored: Mapping[str, Any]) -> StepEntry:
        values = {f.name: stored[f.name] for f in fields(cls) if f.name in stored and f.name != "result"}
        return cls(result=from_json(RESULTS[step], stored.get("result") or {}), **values)

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = _json(self)
        return data


def from_json(kind: type[T], stored: Mapping[str, Any]) -> T:
    """A value object from its JSON: nested value objects and tuples rebuilt, missing fields left at their default,
    keys it does not declare left out."""
    if kind not in _HINTS:  # resolving the annotations is the slow part: once per class
        resolved = get_type_hints(kind)
        _HINTS[kind] = {f.name: resolved[f.name] for f in fields(kind)}
    values = {name: _value(hint, stored[name]) for name, hint in _HINTS[kind].items() if name in stored}
    return kind(**values)


_HINTS: dict[type[Any], dict[str, Any]] = {}


def _value(hint: Any, value: Any) -> Any:
    if value is None:
        return None
    if isinstance(hint, type) and is_dataclass(hint):
        return from_json(hint, value)
    if get_origin(hint) is tuple:
        return tuple(_value(get_args(hint)[0], item) for item in value)
    return value


def _json(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _json(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, list | tuple):
        return [_json(item) for item in value]
    if isinstance(value, dict):
        return {key: _json(item) for key, item in value.items()}
    return value
