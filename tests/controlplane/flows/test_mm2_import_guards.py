"""The MM2 import is no password oracle: it never compares or stores the password of a cluster that exists, its
answer is the same whatever password the file gives, and refused imports are audited and limited per user."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from controlplane.audit.models import AuditRecord
from controlplane.clusters.models import Cluster
from controlplane.flows.mm2import import FAILED_ACTION, FAILED_IMPORTS_WINDOW, MAX_FAILED_IMPORTS, PASSWORD_KEPT
from controlplane.flows.models import Flow
from tests.controlplane.api.base import client_for, make_user

Api = Callable[[str | None], APIClient]

STORED = "the-stored-secret"
WRONG = "a-wrong-guess"
SASL_FILE = """\
clusters = us-west, us-east
us-west.bootstrap.servers = host1:9092
us-west.security.protocol = SASL_PLAINTEXT
us-west.sasl.mechanism = PLAIN
us-west.sasl.username = alice
us-west.sasl.password = {password}
us-east.bootstrap.servers = host2:9092
us-west->us-east.enabled = true
"""
BAD_FLOW = "us-west->us-east.tasks.max = many\n"
BAD_CLUSTER = "us-east.client.id = mm2\n"  # refused after the existing cluster was compared


def sasl_cluster() -> Cluster:
    cluster = Cluster(
        alias="us-west",
        bootstrap_servers="host1:9092",
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="PLAIN",
        sasl_username="alice",
    )
    cluster.sasl_password = STORED
    cluster.save()
    return cluster


def import_text(client: APIClient, text: str) -> Any:
    return client.post("/api/v1/flows/import/", text, content_type="text/plain")


def without_row_identity(body: dict[str, Any]) -> dict[str, Any]:
    drop = {"id", "created_at", "updated_at"}
    rows = {
        kind: [{k: v for k, v in row.items() if k not in drop} for row in body[kind]] for kind in ("clusters", "flows")
    }
    return {**body, **rows, "digest": None}  # the digest is the file's: it differs with the password


@pytest.mark.django_db
def test_a_right_and_a_wrong_password_get_byte_identical_refusals(api: Api) -> None:
    sasl_cluster()
    admin = api("admin")

    right = import_text(admin, SASL_FILE.format(password=STORED) + BAD_CLUSTER)
    wrong = import_text(admin, SASL_FILE.format(password=WRONG) + BAD_CLUSTER)

    assert (right.status_code, wrong.status_code) == (400, 400)
    assert right.content == wrong.content
    assert [problem.split(": ")[:2] for problem in right.json()["properties"]] == [["line 9", "us-east.client.id"]]


@pytest.mark.django_db
def test_a_right_and_a_wrong_password_get_the_same_import_and_the_stored_one_is_kept(api: Api) -> None:
    cluster = sasl_cluster()
    stored_before = Cluster.objects.values().get(pk=cluster.pk)
    admin = api("admin")
    bodies = []
    for password in (WRONG, STORED):
        response = import_text(admin, SASL_FILE.format(password=password))
        assert response.status_code == 201, response.content
        bodies.append(without_row_identity(response.json()))
        assert Cluster.objects.values().get(pk=cluster.pk) == stored_before
        assert Cluster.objects.get(pk=cluster.pk).sasl_password == STORED
        Flow.objects.all().delete()
        Cluster.objects.exclude(pk=cluster.pk).delete()

    assert bodies[0] == bodies[1]
    records = json.dumps(list(AuditRecord.objects.values("action", "before", "after")))
    assert STORED not in records and WRONG not in records


@pytest.mark.django_db
def test_other_settings_than_the_password_change_an_existing_cluster_and_keep_its_password(api: Api) -> None:
    cluster = sasl_cluster()

    response = import_text(api("admin"), SASL_FILE.format(password=WRONG).replace("alice", "bob"))

    assert response.status_code == 201, response.content
    [west] = [item for item in response.json()["items"] if item["name"] == "us-west"]
    assert (west["outcome"], west["changes"]) == (
        "changed",
        [{"property": "sasl.username", "old": "alice", "new": "bob"}],
    )
    assert west["notes"] == [PASSWORD_KEPT]
    cluster.refresh_from_db()
    assert (cluster.sasl_username, cluster.sasl_password) == ("bob", STORED)
    records = json.dumps(list(AuditRecord.objects.values("action", "before", "after")))
    assert STORED not in records and WRONG not in records and "cluster.update" in records


@pytest.mark.django_db
def test_a_change_that_would_clear_the_stored_password_is_refused(api: Api) -> None:
    cluster = sasl_cluster()

    response = import_text(api("admin"), SASL_FILE.format(password=WRONG).replace("host1:9092", "host9:9092"))

    assert response.status_code == 400
    [problem] = response.json()["properties"]
    assert problem.startswith("line 2: us-west.bootstrap.servers: a change here clears the stored sasl.password")
    cluster.refresh_from_db()
    assert (cluster.bootstrap_servers, cluster.sasl_password) == ("host1:9092", STORED)
    assert not Flow.objects.exists()


@pytest.mark.django_db
def test_a_refused_import_is_audited_without_the_file_or_its_secrets(api: Api) -> None:
    admin = api("admin")

    response = import_text(admin, SASL_FILE.format(password=WRONG) + BAD_FLOW)

    assert response.status_code == 400
    [failure] = AuditRecord.objects.filter(action=FAILED_ACTION)
    assert (failure.actor_username, failure.before, failure.after) == ("admin-user", None, {"problems": 1})
    assert WRONG not in json.dumps(list(AuditRecord.objects.values("object_repr", "before", "after")))
    assert not Cluster.objects.exists()


@pytest.mark.django_db
def test_a_malformed_json_import_is_audited_as_refused(api: Api) -> None:
    response = api("admin").post("/api/v1/flows/import/", "{not json", content_type="application/json")

    assert response.status_code == 400
    assert AuditRecord.objects.filter(action=FAILED_ACTION, actor_username="admin-user").count() == 1


@pytest.mark.django_db
def test_failed_imports_are_limited_per_user_with_a_429_that_names_the_limit(api: Api) -> None:
    admin = api("admin")
    good = SASL_FILE.format(password=WRONG)
    statuses = [import_text(admin, good + BAD_FLOW).status_code for _ in range(MAX_FAILED_IMPORTS)]

    limited = import_text(admin, good)

    assert statuses == [400] * MAX_FAILED_IMPORTS
    assert limited.status_code == 429
    assert limited.json()["detail"].startswith(
        f"Too many failed imports: at most {MAX_FAILED_IMPORTS} failed imports in 10 minutes per user."
    )
    assert 0 < int(limited["Retry-After"]) <= FAILED_IMPORTS_WINDOW.total_seconds()
    assert not Cluster.objects.exists() and not Flow.objects.exists()
    other_admin = client_for(make_user("other-admin", "admin"))
    assert import_text(other_admin, good).status_code == 201


@pytest.mark.django_db
def test_a_user_imports_again_once_the_failures_leave_the_window(api: Api) -> None:
    admin = api("admin")
    for _ in range(MAX_FAILED_IMPORTS):
        import_text(admin, BAD_FLOW)
    assert import_text(admin, BAD_FLOW).status_code == 429

    past = timezone.now() - FAILED_IMPORTS_WINDOW - timedelta(seconds=1)
    AuditRecord.objects.filter(action=FAILED_ACTION).update(at=past)

    assert import_text(admin, SASL_FILE.format(password=WRONG)).status_code == 201
