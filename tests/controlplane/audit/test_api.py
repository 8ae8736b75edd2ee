from __future__ import annotations

from collections.abc import Callable

import pytest
from rest_framework.test import APIClient

from controlplane.audit.models import AuditRecord
from controlplane.audit.services import record, snapshot
from controlplane.clusters.models import Cluster

Api = Callable[[str | None], APIClient]


@pytest.mark.django_db
@pytest.mark.parametrize("role", ["viewer", "operator", "admin"])
def test_every_role_reads_the_audit_log_newest_first(api: Api, role: str) -> None:
    client = api("admin")
    client.post("/api/v1/clusters/", {"alias": "a", "bootstrap_servers": "h:1"}, format="json")
    client.patch(f"/api/v1/clusters/{Cluster.objects.get().pk}/", {"bootstrap_servers": "h:2"}, format="json")
    response = api(role).get("/api/v1/audit/")
    assert response.status_code == 200
    results = response.json()["results"]
    assert [r["action"] for r in results] == ["cluster.update", "cluster.create"]
    update = results[0]
    assert update["actor"] == "admin-user" and update["object_repr"] == "a"
    assert (update["before"]["bootstrap_servers"], update["after"]["bootstrap_servers"]) == ("h:1", "h:2")
    assert update["at"]


@pytest.mark.django_db
def test_the_audit_log_filters_by_action_and_object(api: Api) -> None:
    cluster = Cluster.objects.create(alias="a", bootstrap_servers="h:1")
    record(None, "cluster.check", cluster, after={"ok": False})
    record(None, "flow.import", None, after={"flows": []})
    client = api("viewer")
    assert [r["action"] for r in client.get("/api/v1/audit/?action=flow.import").json()["results"]] == ["flow.import"]
    by_object = client.get(f"/api/v1/audit/?object_type=clusters.cluster&object_id={cluster.pk}").json()
    assert [r["action"] for r in by_object["results"]] == ["cluster.check"]


@pytest.mark.django_db
@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
def test_the_audit_log_cannot_be_changed_even_by_an_admin(api: Api, method: str) -> None:
    entry = record(None, "flow.import", None)
    url = "/api/v1/audit/" if method == "post" else f"/api/v1/audit/{entry.pk}/"
    assert getattr(api("admin"), method)(url, {}, format="json").status_code == 405
    assert AuditRecord.objects.count() == 1


@pytest.mark.django_db
@pytest.mark.parametrize("role", [None, "nobody"])
def test_anonymous_and_roleless_users_cannot_read_the_audit_log(api: Api, role: str | None) -> None:
    assert api(role).get("/api/v1/audit/").status_code == 403


@pytest.mark.django_db
def test_a_snapshot_redacts_the_password_and_names_related_objects() -> None:
    cluster = Cluster(alias="a", bootstrap_servers="h:1")
    cluster.sasl_password = "hunter2"
    cluster.save()
    values = snapshot(cluster)
    assert values["sasl_password"] == "********"
    assert "sasl_password_encrypted" not in values
    assert "hunter2" not in str(values)
