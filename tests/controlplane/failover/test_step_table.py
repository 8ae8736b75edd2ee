"""The step table drives the wizard: one row per step in the wizard's order, one POST route per job step that runs
that step with its own inputs, the API's description of each route, and the step list the wizard's page reads."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client
from django.urls import resolve
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from controlplane.clusters.models import Cluster
from controlplane.failover import steps
from controlplane.failover.choices import STEP_ORDER, Step
from controlplane.failover.results import RESULTS
from controlplane.flows.models import Flow
from tests.controlplane.api.base import make_user


def test_the_table_has_one_row_per_step_in_the_order_the_wizard_walks_them() -> None:
    assert [row.step for row in steps.STEPS] == [step for step in STEP_ORDER if step != Step.DONE]
    assert all(RESULTS[row.name] is row.result for row in steps.STEPS)
    assert [row.name for row in steps.JOBS] == [
        "preflight",
        "drain",
        "fence",
        "checkpoint",
        "apply",
        "verify",
        "failback",
    ]


@pytest.mark.parametrize("row", steps.JOBS, ids=lambda row: row.name)
def test_each_job_step_has_a_post_route_that_starts_that_step(row: steps.WizardStep) -> None:
    match = resolve(f"/api/v1/failovers/7/{row.name}/")
    assert (match.url_name, match.kwargs) == (f"failover-{row.name}", {"pk": "7"})
    assert match.func.initkwargs["wizard_step"] == row.name  # type: ignore[attr-defined]  # set by as_view()
    assert match.func.actions == {"post": "start_step"}  # type: ignore[attr-defined]  # set by the router


def test_each_step_route_is_described_with_its_own_request_body_and_description() -> None:
    paths = SchemaGenerator().get_schema(request=None, public=True)["paths"]
    for row in steps.JOBS:
        operation = paths[f"/api/v1/failovers/{{id}}/{row.name}/"]["post"]
        assert operation["description"] == row.doc
        if not row.takes_inputs:
            assert "requestBody" not in operation, row.name
            continue
        body = operation["requestBody"]["content"]["application/json"]["schema"]
        assert body == {"$ref": f"#/components/schemas/{row.inputs.__name__.removesuffix('Serializer')}"}, row.name


@pytest.mark.django_db
def test_a_step_route_validates_the_inputs_of_its_own_step(api: Callable[[str | None], APIClient]) -> None:
    west = Cluster.objects.create(alias="us-west", bootstrap_servers="127.0.0.1:1")
    east = Cluster.objects.create(alias="us-east", bootstrap_servers="127.0.0.1:2")
    Flow.objects.create(source=west, target=east, topics=["orders"])
    client = api("operator")
    plan = {"mode": "planned", "source": "us-west", "target": "us-east", "groups": ["billing"]}
    pk = client.post("/api/v1/failovers/", plan, format="json").json()["id"]

    refused = client.post(f"/api/v1/failovers/{pk}/fence/", {"confirmed": "perhaps"}, format="json")
    unknown = client.post(f"/api/v1/failovers/{pk}/drain/", {"confirmed": True}, format="json")

    assert (refused.status_code, list(refused.json())) == (400, ["confirmed"])
    assert (unknown.status_code, list(unknown.json())) == (400, ["confirmed"])  # the drain takes no inputs


@pytest.mark.django_db
def test_the_wizard_page_carries_the_step_list_of_the_table(api: Callable[[str | None], APIClient]) -> None:
    west = Cluster.objects.create(alias="us-west", bootstrap_servers="127.0.0.1:1")
    east = Cluster.objects.create(alias="us-east", bootstrap_servers="127.0.0.1:2")
    Flow.objects.create(source=west, target=east, topics=["orders"])
    plan = {"mode": "planned", "source": "us-west", "target": "us-east", "groups": ["billing"]}
    pk = api("operator").post("/api/v1/failovers/", plan, format="json").json()["id"]
    browser = Client()
    browser.force_login(make_user("page-viewer", "viewer"))

    page = browser.get(f"/failover/{pk}/").content.decode()

    found = re.search(r'<script id="wizard-steps" type="application/json">(.*?)</script>', page, re.S)
    assert found is not None
    listed: list[dict[str, Any]] = json.loads(found.group(1))
    assert [(s["name"], s["label"]) for s in listed] == [(row.name, row.label) for row in steps.STEPS]
    assert {s["name"]: s["rerun"] for s in listed if s["rerun"]} == {"drain": "always", "checkpoint": "waiting"}
    assert [s["name"] for s in listed if s["stops_producers"]] == ["drain", "fence"]
