from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

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


@pytest.mark.django_db
def test_the_audit_log_filters_by_actor_and_time_and_pages(api: Api) -> None:
    cluster = Cluster.objects.create(alias="a", bootstrap_servers="h:1")
    entries = [record(None, "cluster.check", cluster, after={"n": n}) for n in range(5)]
    base = entries[0].at
    for n, entry in enumerate(entries):  # one a minute apart, the newest last
        AuditRecord.objects.filter(pk=entry.pk).update(at=base + timedelta(minutes=n), actor_username=f"u{n % 2}")
    client = api("viewer")
    since, until = (base + timedelta(minutes=1)).isoformat(), (base + timedelta(minutes=4)).isoformat()
    window = client.get("/api/v1/audit/", {"since": since, "until": until}).json()
    assert [r["after"]["n"] for r in window["results"]] == [3, 2, 1]
    by_actor = client.get("/api/v1/audit/", {"actor": "u0"}).json()
    assert [r["after"]["n"] for r in by_actor["results"]] == [4, 2, 0]
    page = client.get("/api/v1/audit/", {"actor": "u0", "limit": 2, "offset": 2}).json()
    assert page["count"] == 3 and [r["after"]["n"] for r in page["results"]] == [0]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("query", "field", "reason"),
    [
        ({"user": "admin"}, "user", "unknown parameter"),
        ({"since": "yesterday"}, "since", "Datetime has wrong format"),
        ({"since": "2026-11-28T10:00:00Z", "until": "2026-11-28T09:00:00Z"}, "until", "must be after since"),
    ],
)
def test_a_bad_audit_query_names_the_parameter(api: Api, query: dict[str, str], field: str, reason: str) -> None:
    response = api("viewer").get("/api/v1/audit/", query)
    assert response.status_code == 400
    assert reason in response.json()[field][0]
