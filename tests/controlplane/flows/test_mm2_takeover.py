"""Importing a MirrorMaker 2 file with `takeover`: the flows wait paused for a job that seeds their start positions
from MM2's committed offsets and then resumes them; the Kafka side is a stand-in (tests/integration has the real
one)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from controlplane.audit.models import AuditRecord
from controlplane.flows import takeover
from controlplane.flows.models import Flow
from replication.config import FlowConfig
from replication.mm2.takeover import PartitionTakeover
from replication.task.takeover import Takeover, TakeoverError

Api = Callable[[str | None], APIClient]
FILE = """\
clusters = us-west, us-east
us-west.bootstrap.servers = host1:9092
us-east.bootstrap.servers = host2:9092
us-west->us-east.enabled = true
"""
MISSING = "MM2's offsets storage topic mm2-offsets.us-west.internal does not exist in target cluster us-east"


def _seeded(flow: FlowConfig, timeout: float) -> Takeover:
    partitions = [PartitionTakeover("orders", 0, "us-west.orders", 120, 100, 98)]
    return Takeover(flow.name, "mm2-offsets.us-west.internal", partitions)


def _import(api: Api) -> dict[str, Any]:
    response = api("admin").post("/api/v1/flows/import/?takeover=true", {"properties": FILE}, format="json")
    assert response.status_code == 201, response.content
    body: dict[str, Any] = response.json()
    return body


@pytest.mark.django_db(transaction=True)
def test_the_job_reports_each_partition_and_resumes_the_flow(
    api: Api, eager: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[bool] = []

    def seeded(flow: FlowConfig, timeout: float) -> Takeover:
        seen.append(Flow.objects.get().paused)  # no task may start before the positions are stored
        return _seeded(flow, timeout)

    monkeypatch.setattr(takeover, "take_over", seeded)
    job = _import(api)["takeover_job"]
    assert (job["kind"], job["state"]) == ("flow.mm2_takeover", "succeeded"), job["error"]
    (flow,) = job["result"]["flows"]
    assert (flow["flow"], flow["taken_over"]) == ("us-west->us-east", 1)
    assert flow["partitions"][0] | {"note": ""} == {
        "topic": "orders",
        "partition": 0,
        "remote_topic": "us-west.orders",
        "committed": 120,
        "start": 100,
        "downstream": 98,
        "kept": False,
        "note": "",
    }
    assert seen == [True] and Flow.objects.get().paused is False
    audit = AuditRecord.objects.get(action="flow.mm2_takeover")
    assert audit.after["starts"] == {"orders-0": 100}


@pytest.mark.django_db(transaction=True)
def test_a_takeover_that_cannot_read_mm2s_offsets_fails_by_name_and_leaves_the_flow_paused(
    api: Api, eager: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    def missing(flow: FlowConfig, timeout: float) -> Takeover:
        raise TakeoverError(MISSING)

    monkeypatch.setattr(takeover, "take_over", missing)
    job = _import(api)["takeover_job"]
    assert job["state"] == "failed"
    assert job["error"] == f"us-west->us-east: not taken over from MM2, left paused: {MISSING}"
    assert Flow.objects.get().paused is True


@pytest.mark.django_db
def test_a_running_flow_of_the_file_refuses_a_takeover_and_nothing_is_written(api: Api) -> None:
    assert api("admin").post("/api/v1/flows/import/", {"properties": FILE}, format="json").status_code == 201
    changed = FILE + "us-west->us-east.topics = orders\n"
    response = api("admin").post("/api/v1/flows/import/?takeover=true", {"properties": changed}, format="json")
    assert response.status_code == 400
    assert response.json()["takeover"] == [takeover.RUNNING_FLOW.format(name="us-west->us-east")]
    assert Flow.objects.get().topics == [".*"]


@pytest.mark.django_db
def test_an_import_without_takeover_starts_no_job_and_leaves_its_flows_running(api: Api) -> None:
    body = api("admin").post("/api/v1/flows/import/", {"properties": FILE}, format="json").json()
    assert body["takeover_job"] is None and Flow.objects.get().paused is False
