"""Each step's result is a declared value object, every field of it described in the API; the API serves what the
step stored; and entries stored before the results were typed still read, with defaults for what they lack."""

from __future__ import annotations

from typing import Any

import pytest

from controlplane.clusters.models import Cluster
from controlplane.failover.api.serializers import StepEntrySerializer, StepsSerializer
from controlplane.failover.models import Failover
from controlplane.failover.results import RESULTS, DrainResult, PreflightResult, StepEntry
from controlplane.failover.services import machine
from controlplane.failover.steps import JOBS, RESULT_SERIALIZERS
from tests.support.documented import assert_describes, assert_documented


@pytest.mark.parametrize("step", sorted(RESULTS))
def test_every_field_of_a_step_result_is_described_in_the_api(step: str) -> None:
    assert_describes(RESULTS[step], RESULT_SERIALIZERS[step]())


def test_every_step_and_every_entry_field_is_described() -> None:
    described = StepsSerializer().fields
    assert set(described) == set(RESULTS) and {step.name for step in JOBS} < set(RESULTS)
    for step, field in described.items():
        assert isinstance(field, StepEntrySerializer)
        assert set(field.fields) == {"inputs", "result", "by", "at", "complete", "attempts", "skipped"}, step
        assert type(field.fields["result"]) is RESULT_SERIALIZERS[step]


def test_a_stored_result_is_served_as_stored_with_every_field_described() -> None:
    failover = Failover(mode="planned", source=Cluster(alias="us-west"), groups=["billing"], steps={})
    result = PreflightResult(failed=("flow_healthy",), unacknowledged=("checkpoints_exist",))
    machine.store(failover, "preflight", {"proceed": False, "acknowledge": []}, result, None, False)
    served = StepsSerializer(failover.entries).data
    assert served["preflight"] == failover.steps["preflight"]
    assert_documented(served, StepsSerializer())


# The shapes rows had before the results were typed: a plan with no time, a skipped drain with only its reason, a
# checkpoint from before its RPO had a note, an apply that only failed.
OLD_STEPS: dict[str, Any] = {
    "plan": {
        "inputs": {"mode": "unplanned", "source": "us-west", "target": "us-east", "groups": ["billing"]}
        | {"dry_run": False, "drain_threshold": 0},
        "result": {"created": 7},
        "by": "olga",
        "complete": True,
    },
    "drain": {"skipped": True, "result": {"reason": "unplanned: the source is down, there is nothing to drain"}},
    "checkpoint": {
        "inputs": {},
        "result": {
            "checkpoints_written": 0,
            "source_reachable": False,
            "source_error": "no broker answered",
            "preview": [],
            "inexact": [],
            "rpo": {"records": 12, "as_of": "2026-11-24T10:00:00+00:00", "latency_p99_ms": None},
            "waiting": False,
        },
        "by": "olga",
        "at": "2026-11-24T10:01:00+00:00",
        "complete": True,
        "attempts": 1,
    },
    "apply": {
        "inputs": {"override_backwards": False},
        "result": {"error": "not EMPTY on the target: billing is STABLE with 1 members"},
        "by": "olga",
        "at": "2026-11-24T10:02:00+00:00",
        "complete": False,
        "attempts": 2,
    },
}


def test_entries_stored_before_the_results_were_typed_read_with_defaults() -> None:
    failover = Failover(mode="unplanned", groups=["billing"], steps=OLD_STEPS)
    served = StepsSerializer(failover.entries).data
    assert_documented(served, StepsSerializer())
    assert (served["plan"]["at"], served["plan"]["attempts"], served["plan"]["skipped"]) == (None, 0, False)
    assert served["drain"]["skipped"] and served["drain"]["result"]["reason"].startswith("unplanned")
    assert served["checkpoint"]["result"]["rpo"] == {
        "records": 12,
        "as_of": "2026-11-24T10:00:00+00:00",
        "latency_p99_ms": None,
        "note": "",
    }
    assert served["apply"]["result"]["written"] == [] and served["apply"]["result"]["error"].startswith("not EMPTY")
    assert failover.result(DrainResult).reason.startswith("unplanned")
    assert failover.result(PreflightResult) == PreflightResult()  # not run: every field at its default


def test_an_entry_round_trips_through_its_json() -> None:
    entry = StepEntry(DrainResult(lag=5, threshold=10, waiting=True), {}, "olga", "2026-11-24T10:00:00+00:00")
    assert StepEntry.from_json("drain", entry.as_json()) == entry
