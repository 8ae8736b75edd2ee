"""The OpenAPI schema is complete: every view declares its responses, so drf-spectacular guesses nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import requests
import schemathesis
import yaml
from django.http import HttpResponse
from drf_spectacular.generators import SchemaGenerator
from rest_framework.renderers import JSONRenderer
from rest_framework.test import APIClient
from schemathesis.specs.openapi.schemas import OpenApiSchema

from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from tests.controlplane.test_settings_from_env import REPO

# The UI's read endpoints, the last views that had no serializer: each now names its response component.
UI_READS = {
    "/api/v1/dashboard/": "Dashboard",
    "/api/v1/flows/{id}/history/": "FlowHistory",
    "/api/v1/flows/{id}/checkpoint-freshness/": "FlowCheckpoints",
    "/api/v1/flows/{id}/reports/": "FlowReports",
}


def test_schema_generation_has_no_errors_or_warnings_and_validates(tmp_path: Path) -> None:
    # A fresh process: drf-spectacular counts errors and warnings in a global that other tests' schema requests
    # would already have filled. --fail-on-warn fails on either; --validate checks the result against OpenAPI 3.
    out = tmp_path / "schema.yaml"
    env = os.environ | {"DJANGO_SETTINGS_MODULE": "controlplane.settings", "MIRRORPLANE_STATE_DIR": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, str(REPO / "manage.py"), "spectacular", "--fail-on-warn", "--validate", "--file", str(out)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "Schema generation summary" not in result.stderr, result.stderr
    paths = yaml.safe_load(out.read_text())["paths"]
    for path, component in UI_READS.items():
        response = paths[path]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
        assert response == {"$ref": f"#/components/schemas/{component}"}, path


@cache
def _served() -> OpenApiSchema:
    """The schema /api/schema/ serves, generated in-process."""
    raw = json.loads(JSONRenderer().render(SchemaGenerator().get_schema(request=None, public=True)))
    return schemathesis.openapi.from_dict(raw)


def _conforms(method: str, path: str, url: str, response: HttpResponse) -> None:
    """Schemathesis' response checks (status code, content type, body schema) on a test client's answer."""
    request = requests.Request(method, f"http://testserver{url}").prepare()
    headers = {name: [value] for name, value in response.headers.items()}
    answer = schemathesis.Response(response.status_code, headers, response.content, request, 0.0, True)
    _served()[path][method].validate_response(answer)  # raises, naming what does not conform


@pytest.mark.django_db
def test_an_opt_in_paged_list_conforms_both_whole_and_paged(api: Callable[[str | None], APIClient]) -> None:
    Cluster.objects.create(alias="us-west", bootstrap_servers="west:9092")
    Cluster.objects.create(alias="us-east", bootstrap_servers="east:9092")
    whole, page = (api("viewer").get(url) for url in ("/api/v1/clusters/", "/api/v1/clusters/?limit=1"))

    assert [c["alias"] for c in whole.json()] == ["us-west", "us-east"]
    assert (page.json()["count"], [c["alias"] for c in page.json()["results"]]) == (2, ["us-west"])
    _conforms("GET", "/api/v1/clusters/", "/api/v1/clusters/", whole)
    _conforms("GET", "/api/v1/clusters/", "/api/v1/clusters/?limit=1", page)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("action", "body"),
    [("apply", {}), ("abort", {"reason": "again"}), ("drain-threshold", {"drain_threshold": 5})],
    ids=["a-step-not-current", "abort-an-aborted-one", "drain-threshold-after-the-drain"],
)
def test_a_failover_refused_with_409_carries_the_documented_detail_and_job(
    api: Callable[[str | None], APIClient], action: str, body: dict[str, Any]
) -> None:
    west = Cluster.objects.create(alias="us-west", bootstrap_servers="127.0.0.1:1")
    east = Cluster.objects.create(alias="us-east", bootstrap_servers="127.0.0.1:2")
    Flow.objects.create(source=west, target=east, topics=["orders"])
    client = api("operator")
    plan = {"mode": "planned", "source": "us-west", "target": "us-east", "groups": ["billing"]}
    pk = client.post("/api/v1/failovers/", plan, format="json").json()["id"]
    if action != "apply":  # apply is refused at preflight; the others once the failover is aborted
        assert client.post(f"/api/v1/failovers/{pk}/abort/", {"reason": "drill"}, format="json").status_code == 200

    url = f"/api/v1/failovers/{pk}/{action}/"
    refused = client.post(url, body, format="json")

    assert refused.status_code == 409
    components = _served().raw_schema["components"]["schemas"]
    assert set(refused.json()) == set(components["Busy"]["required"]) == {"detail", "job"}
    assert set(refused.json()["job"]) == set(components["StepJob"]["properties"])
    assert refused.json()["job"]["state"] == "idle"
    _conforms("POST", f"/api/v1/failovers/{{id}}/{action}/", url, refused)


def test_every_operation_documents_the_refusals_drf_gives_it() -> None:
    operations = _served().raw_schema["paths"]
    for path, methods in operations.items():
        for method, operation in methods.items():
            documented = set(operation["responses"])
            where = {parameter["in"] for parameter in operation.get("parameters", [])}
            assert "403" in documented, (method, path)  # session authentication first: no 401 challenge
            assert ("404" in documented) >= ("path" in where), (method, path)
            assert ("400" in documented) >= ("requestBody" in operation or "query" in where), (method, path)
            assert ("415" in documented) >= ("requestBody" in operation), (method, path)
            for status, response in operation["responses"].items():
                assert not status.startswith("4") or "content" in response, (method, path, status)
    flow = operations["/api/v1/flows/{id}/"]["get"]["responses"]["404"]["content"]["application/json"]
    assert flow["schema"] == {"$ref": "#/components/schemas/Error"}
