"""Input is never dropped in silence: every write of the API refuses a field it does not know, naming it, and
applies nothing; a read-only field sent back as read is ignored, as DRF ignores it."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from functools import cache
from typing import Any

import pytest
from django.db.models import Model
from django.utils import timezone
from drf_spectacular.generators import SchemaGenerator
from rest_framework import serializers
from rest_framework.renderers import JSONRenderer
from rest_framework.test import APIClient

from controlplane.accounts.models import ApiToken
from controlplane.alerts.models import Alert, AlertRule, Silence, WebhookTarget
from controlplane.audit.models import AuditRecord
from controlplane.clusters import crypto
from controlplane.clusters.models import Cluster
from controlplane.core.serializers import UNKNOWN_FIELD, StrictInput
from controlplane.failover.models import Failover
from controlplane.flows.models import Flow
from controlplane.reports.models import Report

Api = Callable[[str | None], APIClient]
UNKNOWN = "zz_not_a_field"
WRITES = ("post", "put", "patch")
ROWS: tuple[type[Model], ...] = (Cluster, Flow, Failover, AlertRule, WebhookTarget, Silence, Alert, Report, ApiToken)


@cache
def write_operations() -> list[tuple[str, str]]:
    """(method, path) of every write the served schema documents."""
    raw = json.loads(JSONRenderer().render(SchemaGenerator().get_schema(request=None, public=True)))
    return [(method, path) for path, ops in raw["paths"].items() for method in ops if method in WRITES]


def seed() -> dict[str, int]:
    """A row for each kind of id a write's path names."""
    west = Cluster.objects.create(alias="us-west", bootstrap_servers="127.0.0.1:1")
    east = Cluster.objects.create(alias="us-east", bootstrap_servers="127.0.0.1:2")
    flow = Flow.objects.create(source=west, target=east, topics=["orders"])
    failover = Failover.objects.create(mode="planned", source=west, target=east, groups=["billing"])
    rule = AlertRule.objects.create(kind="lag_records", flow=flow, threshold=10)
    url = "https://hooks.example.com/x"
    hook = WebhookTarget.objects.create(name="ops", url_encrypted=crypto.encrypt(url), url_origin=url[:25])
    now = timezone.now()
    silence = Silence.objects.create(kind="lag_records", reason="r", starts_at=now, ends_at=now + timedelta(hours=1))
    alert = Alert.objects.create(
        kind="lag_records",
        subject=f"flow:{flow.pk}",
        name=flow.name,
        flow=flow,
        state="firing",
        value=20,
        threshold=10,
        started_at=now,
        fired_at=now,
    )
    return {
        "/api/v1/clusters/": west.pk,
        "/api/v1/flows/": flow.pk,
        "/api/v1/failovers/": failover.pk,
        "/api/v1/alert-rules/": rule.pk,
        "/api/v1/alert-webhooks/": hook.pk,
        "/api/v1/alert-silences/": silence.pk,
        "/api/v1/alerts/": alert.pk,
    }


def url_of(path: str, ids: dict[str, int]) -> str:
    path = path.replace("{group}", "billing")
    if "{id}" not in path:
        return path
    collection = path.split("{id}")[0]
    return path.replace("{id}", str(ids[collection]))


def state() -> tuple[Any, ...]:
    """Every row an API write could make or change, and the audit records but a refused import's."""
    rows = tuple(tuple(model._default_manager.order_by("pk").values()) for model in ROWS)
    return (*rows, AuditRecord.objects.exclude(action="flow.import_failed").count())


def test_the_walk_covers_every_kind_of_write() -> None:
    paths = {path for _, path in write_operations()}
    assert len(write_operations()) >= 30
    assert {"/api/v1/flows/{id}/", "/api/v1/flows/{id}/pause/", "/api/v1/failovers/{id}/drain/"} <= paths


@pytest.mark.django_db
def test_every_write_refuses_an_unknown_field_naming_it_and_applies_nothing(api: Api) -> None:
    ids = seed()
    client = api("admin")
    before = state()
    answers = {}
    for method, path in write_operations():
        response = getattr(client, method)(url_of(path, ids), {UNKNOWN: 1}, format="json")
        answers[method.upper(), path] = (response.status_code, response.json().get(UNKNOWN))
    assert answers == {operation: (400, [UNKNOWN_FIELD]) for operation in answers}
    assert state() == before


@pytest.mark.django_db
def test_patching_a_misspelt_property_is_refused_and_changes_nothing(api: Api) -> None:
    flow = Flow.objects.get(pk=seed()["/api/v1/flows/"])
    client = api("admin")
    before = state()
    response = client.patch(f"/api/v1/flows/{flow.pk}/", {"task_max": 2, "topics": ["a"]}, format="json")
    assert (response.status_code, response.json()) == (400, {"task_max": [UNKNOWN_FIELD]})
    assert state() == before
    assert Flow.objects.get().topics == ["orders"]


@pytest.mark.django_db
def test_an_unknown_field_is_named_beside_the_other_fields_errors(api: Api) -> None:
    body = {"alias": "", "bootstrap_servers": "kafka:9092", "sasl_pasword": "secret"}
    response = api("admin").post("/api/v1/clusters/", body, format="json")
    assert response.status_code == 400
    assert set(response.json()) == {"alias", "sasl_pasword"}
    assert response.json()["sasl_pasword"] == [UNKNOWN_FIELD]
    assert not Cluster.objects.exists()


@pytest.mark.django_db
def test_an_operation_without_inputs_refuses_any_field_and_does_not_run(api: Api) -> None:
    flow = Flow.objects.get(pk=seed()["/api/v1/flows/"])
    refused = api("operator").post(f"/api/v1/flows/{flow.pk}/pause/", {"force": True}, format="json")
    assert (refused.status_code, refused.json()) == (400, {"force": [UNKNOWN_FIELD]})
    assert Flow.objects.get().paused is False
    assert api("operator").post(f"/api/v1/flows/{flow.pk}/pause/").status_code == 200
    assert Flow.objects.get().paused is True


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("path", "field"),
    [("/api/v1/flows/", "created_at"), ("/api/v1/clusters/", "has_sasl_password"), ("/api/v1/flows/", "name")],
)
def test_a_read_only_field_sent_back_unchanged_is_accepted(api: Api, path: str, field: str) -> None:
    url = f"{path}{seed()[path]}/"
    client = api("admin")
    read = client.get(url).json()
    assert field in read
    body = {name: value for name, value in read.items() if value is not None}
    answer = client.put(url, body, format="json")
    assert answer.status_code == 200, answer.content
    assert answer.json()[field] == read[field]


@pytest.mark.django_db
def test_a_report_names_an_unknown_option_inside_its_parameters(api: Api) -> None:
    body = {"job": "latency", "parameters": {"bogus": 1}}
    response = api("operator").post("/api/v1/reports/", body, format="json")
    assert response.status_code == 400
    assert list(response.json()["parameters"]) == ["bogus"]
    assert not Report.objects.exists()


class _Partition(StrictInput, serializers.Serializer[dict[str, Any]]):
    partition = serializers.IntegerField()


class _Plan(StrictInput, serializers.Serializer[dict[str, Any]]):
    name = serializers.CharField()
    first = _Partition()
    rest = _Partition(many=True)


def test_a_nested_serializer_names_its_own_unknown_field_under_its_name() -> None:
    data = {"name": "a", "first": {"partition": 1, "leader": 2}, "rest": [{"partition": 2}, {"partiton": 3}]}
    plan = _Plan(data=data)
    assert not plan.is_valid()
    assert plan.errors == {
        "first": {"leader": [UNKNOWN_FIELD]},
        "rest": {1: {"partition": ["This field is required."], "partiton": [UNKNOWN_FIELD]}},
    }
