"""The failover API without Kafka: who may do what, plans refused with field errors, steps only in order."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from controlplane.audit.models import AuditRecord
from controlplane.clusters.models import Cluster
from controlplane.failover.models import Failover
from controlplane.flows.models import Flow

pytestmark = pytest.mark.django_db
URL = "/api/v1/failovers/"


@pytest.fixture
def flow() -> Flow:
    west = Cluster.objects.create(alias="us-west", bootstrap_servers="127.0.0.1:1")
    east = Cluster.objects.create(alias="us-east", bootstrap_servers="127.0.0.1:2")
    return Flow.objects.create(source=west, target=east, topics=["orders"])


def plan(**changes: Any) -> dict[str, Any]:
    return {"mode": "planned", "source": "us-west", "target": "us-east", "groups": ["billing"], **changes}


def test_a_viewer_reads_failovers_but_cannot_start_one(api: Callable[[str | None], APIClient], flow: Flow) -> None:
    assert api("viewer").get(URL).status_code == 200
    assert api("viewer").post(URL, plan(), format="json").status_code == 403
    assert Failover.objects.count() == 0


def test_an_operator_plans_a_failover_that_waits_at_preflight(
    api: Callable[[str | None], APIClient], flow: Flow
) -> None:
    response = api("operator").post(URL, plan(dry_run=True), format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["step"], body["status"], body["dry_run"]) == ("preflight", "active", True)
    assert [s["state"] for s in body["stepper"]][:2] == ["done", "current"]
    assert AuditRecord.objects.filter(action="failover.plan", object_id=str(body["id"])).exists()


def test_the_plan_step_keeps_the_validated_plan_not_the_raw_request(
    api: Callable[[str | None], APIClient], flow: Flow
) -> None:
    """An unknown field is refused (one holding a NUL byte must not reach Postgres' JSON either, a 500)."""
    refused = api("operator").post(URL, plan(extra={"x": "a\x00b"}), format="json")
    assert (refused.status_code, refused.json()) == (400, {"extra": ["Unknown field."]})
    assert not Failover.objects.exists()
    response = api("operator").post(URL, plan(), format="json")
    assert response.status_code == 201, response.content
    stored = Failover.objects.get().steps["plan"]["inputs"]
    assert stored == {
        "mode": "planned",
        "source": "us-west",
        "target": "us-east",
        "groups": ["billing"],
        "dry_run": False,
        "drain_threshold": 0,
    }


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"target": "us-west"}, "target"),
        ({"source": "us-east", "target": "us-west"}, "target"),  # no flow us-east->us-west
        ({"groups": []}, "groups"),
        ({"groups": [" "]}, "groups"),
        ({"mode": "sideways"}, "mode"),
        ({"source": "nowhere"}, "source"),
        ({"source": "us-\x00west"}, "source"),  # Postgres refuses NUL in text: a 400, not a 500 from the lookup
        ({"target": "\x00"}, "target"),
    ],
)
def test_a_bad_plan_names_the_field_and_saves_nothing(
    api: Callable[[str | None], APIClient], flow: Flow, changes: dict[str, Any], field: str
) -> None:
    response = api("operator").post(URL, plan(**changes), format="json")
    assert response.status_code == 400
    assert field in response.json()
    assert Failover.objects.count() == 0


def test_a_group_cannot_be_in_two_active_failovers(api: Callable[[str | None], APIClient], flow: Flow) -> None:
    client = api("operator")
    assert client.post(URL, plan(), format="json").status_code == 201
    second = client.post(URL, plan(), format="json")
    assert second.status_code == 400
    assert "already moving" in second.json()["groups"][0]


def test_steps_run_only_in_order_and_not_after_an_abort(api: Callable[[str | None], APIClient], flow: Flow) -> None:
    client = api("operator")
    pk = client.post(URL, plan(), format="json").json()["id"]
    early = client.post(f"{URL}{pk}/apply/", {}, format="json")  # refused before anything is queued
    assert early.status_code == 409
    assert "at step preflight" in early.json()["detail"]
    aborted = client.post(f"{URL}{pk}/abort/", {"reason": "drill cancelled"}, format="json")
    assert aborted.json()["status"] == "aborted"
    assert client.post(f"{URL}{pk}/preflight/", {}, format="json").status_code == 409
    assert AuditRecord.objects.filter(action="failover.abort").count() == 1


def test_a_viewer_cannot_run_a_step(api: Callable[[str | None], APIClient], flow: Flow) -> None:
    pk = api("operator").post(URL, plan(), format="json").json()["id"]
    assert api("viewer").post(f"{URL}{pk}/preflight/", {}, format="json").status_code == 403
    assert Failover.objects.get(pk=pk).steps.keys() == {"plan"}


def test_the_failover_list_filters_by_state_and_searches_aliases_flow_names_and_groups(
    api: Callable[[str | None], APIClient], flow: Flow
) -> None:
    west, east = flow.source, flow.target
    backup = Cluster.objects.create(alias="backup", bootstrap_servers="127.0.0.1:3")

    def made(source: Cluster, target: Cluster, groups: list[str], status: str) -> int:
        return Failover.objects.create(mode="planned", source=source, target=target, groups=groups, status=status).pk

    billing = made(west, east, ["billing", "audit"], "completed")
    shipping = made(east, backup, ["shipping"], "active")
    refunds = made(west, backup, ["refunds"], "aborted")
    ledger = made(east, west, ["ledger-billing"], "active")
    client = api("viewer")

    def ids(**query: Any) -> list[int]:
        response = client.get(URL, query)
        assert response.status_code == 200, response.content
        return [f["id"] for f in response.json()]

    assert ids() == [ledger, refunds, shipping, billing]  # the plain list without limit, newest first
    assert ids(state="active") == [ledger, shipping]
    assert ids(state="completed") == [billing]
    assert ids(search="BILLING") == [ledger, billing]
    assert ids(search="backup") == [refunds, shipping]
    assert ids(search="us-east->us-west") == [ledger]  # the flow's name
    assert ids(search="billing", state="active") == [ledger]
    assert ids(search="nothing-like-it") == []
    page = client.get(URL, {"state": "active", "limit": 1, "offset": 1}).json()
    assert (page["count"], [f["id"] for f in page["results"]], page["next"]) == (2, [shipping], None)
    for query, field in (
        ({"state": "running"}, "state"),
        ({"state": ""}, "state"),
        ({"limit": 5, "offset": "x"}, "offset"),
    ):
        response = client.get(URL, query)
        assert (response.status_code, list(response.json())) == (400, [field]), query
    assert client.get(URL, {"state": "running"}).json()["state"] == ["expected one of active, completed, aborted"]
