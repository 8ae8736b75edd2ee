from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from controlplane.audit.models import AuditRecord
from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from tests.controlplane.api.base import ViewSetContract

Api = Callable[[str | None], APIClient]
PASSWORD = "pa55-w0rd-never-shown"


class TestClusterAPI(ViewSetContract):
    url = "/api/v1/clusters/"
    model = Cluster
    audit_name = "cluster"

    def make_object(self) -> Cluster:
        return Cluster.objects.create(alias="existing", bootstrap_servers="127.0.0.1:19092")

    def create_data(self) -> dict[str, Any]:
        return {"alias": "us-west", "bootstrap_servers": "127.0.0.1:19092"}

    def update_data(self) -> dict[str, Any]:
        return {"bootstrap_servers": "127.0.0.1:19093,127.0.0.1:19094"}


def sasl_cluster(**overrides: Any) -> dict[str, Any]:
    return {
        "alias": "secure",
        "bootstrap_servers": "kafka1:9093",
        "security_protocol": "SASL_SSL",
        "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_username": "mirror",
        "sasl_password": PASSWORD,
        **overrides,
    }


@pytest.mark.django_db
def test_the_password_is_stored_encrypted_and_never_returned(api: Api) -> None:
    client = api("admin")
    created = client.post("/api/v1/clusters/", sasl_cluster(), format="json")
    assert created.status_code == 201, created.content
    cluster = Cluster.objects.get()
    assert PASSWORD not in cluster.sasl_password_encrypted
    assert cluster.sasl_password == PASSWORD
    assert created.json()["has_sasl_password"] is True
    for response in (created, client.get("/api/v1/clusters/"), client.get(f"/api/v1/clusters/{cluster.pk}/")):
        assert PASSWORD not in response.content.decode()
        body = response.json()
        for item in body if isinstance(body, list) else [body]:
            assert "sasl_password" not in item and "sasl_password_encrypted" not in item


@pytest.mark.django_db
def test_an_update_without_a_password_keeps_the_stored_one(api: Api) -> None:
    client = api("admin")
    pk = client.post("/api/v1/clusters/", sasl_cluster(), format="json").json()["id"]
    response = client.patch(f"/api/v1/clusters/{pk}/", {"sasl_username": "other"}, format="json")
    assert response.status_code == 200, response.content
    assert Cluster.objects.get().sasl_password == PASSWORD


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"alias": "us west"}, "alias"),
        ({"alias": "x" * 65}, "alias"),
        ({"alias": ""}, "alias"),
        ({"bootstrap_servers": "no-port"}, "bootstrap_servers"),
        ({"bootstrap_servers": "h" * 100_000 + ":9092"}, "bootstrap_servers"),
        ({"security_protocol": "KERBEROS"}, "security_protocol"),
        ({"security_protocol": 7}, "security_protocol"),
        ({"sasl_mechanism": ""}, "sasl_mechanism"),
        ({"sasl_password": ""}, "sasl_password"),
        ({"sasl_password": "p" * 100_000}, "sasl_password"),
        ({"security_protocol": "PLAINTEXT"}, "sasl_mechanism"),
        ({"security_protocol": "SASL_PLAINTEXT", "ssl_ca_pem": "-----BEGIN CERTIFICATE-----"}, "ssl_ca_pem"),
        (
            {
                "security_protocol": "SSL",
                "sasl_mechanism": "",
                "sasl_username": "",
                "sasl_password": "",
                "ssl_ca_pem": "x" * 100_000,
            },
            "ssl_ca_pem",
        ),
    ],
)
def test_bad_cluster_input_gets_a_field_level_400_and_saves_nothing(api: Api, data: dict[str, Any], field: str) -> None:
    response = api("admin").post("/api/v1/clusters/", sasl_cluster(**data), format="json")
    assert response.status_code == 400
    assert field in response.json(), response.json()
    assert not Cluster.objects.exists()
    assert not AuditRecord.objects.exists()


@pytest.mark.django_db
def test_a_duplicate_alias_is_refused(api: Api) -> None:
    Cluster.objects.create(alias="us-west", bootstrap_servers="h:1")
    response = api("admin").post("/api/v1/clusters/", {"alias": "us-west", "bootstrap_servers": "h:2"}, format="json")
    assert response.status_code == 400
    assert "alias" in response.json()


@pytest.mark.django_db
def test_wrong_json_types_get_a_400(api: Api) -> None:
    client = api("admin")
    assert client.post("/api/v1/clusters/", ["not", "an", "object"], format="json").status_code == 400
    assert client.post("/api/v1/clusters/", {"alias": ["x"], "bootstrap_servers": {}}, format="json").status_code == 400
    assert not Cluster.objects.exists()


@pytest.mark.django_db
def test_a_cluster_used_by_a_flow_cannot_be_deleted_or_renamed(api: Api) -> None:
    west = Cluster.objects.create(alias="us-west", bootstrap_servers="h:1")
    east = Cluster.objects.create(alias="us-east", bootstrap_servers="h:2")
    Flow.objects.create(source=west, target=east)
    client = api("admin")
    deleted = client.delete(f"/api/v1/clusters/{west.pk}/")
    assert deleted.status_code == 409
    assert "us-west->us-east" in deleted.json()["detail"]
    renamed = client.patch(f"/api/v1/clusters/{west.pk}/", {"alias": "eu-west"}, format="json")
    assert renamed.status_code == 400
    assert "alias" in renamed.json()
    assert Cluster.objects.filter(alias="us-west").exists()


# --- connectivity check -------------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_an_unreachable_bootstrap_fails_the_check_job_with_the_exact_connection_error_and_saves_nothing(
    api: Api, eager: None
) -> None:
    response = api("admin").post(
        "/api/v1/clusters/check/", {"alias": "nowhere", "bootstrap_servers": "127.0.0.1:1"}, format="json"
    )
    assert response.status_code == 202
    job = api("admin").get(response.json()["url"]).json()
    assert job["state"] == "failed"
    assert "127.0.0.1:1" in job["error"] and "Connection refused" in job["error"]
    assert not Cluster.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_checking_a_saved_unreachable_cluster_reports_the_error_and_audits_the_check(api: Api, eager: None) -> None:
    cluster = Cluster.objects.create(alias="nowhere", bootstrap_servers="127.0.0.1:1")
    response = api("operator").post(f"/api/v1/clusters/{cluster.pk}/check/")
    assert response.status_code == 202
    assert "Connection refused" in response.json()["error"]
    audit = AuditRecord.objects.get(action="cluster.check")
    assert audit.after is not None and audit.after["ok"] is False
    assert audit.object_id == str(cluster.pk)


@pytest.mark.django_db
def test_a_viewer_cannot_run_the_connectivity_check(api: Api) -> None:
    cluster = Cluster.objects.create(alias="nowhere", bootstrap_servers="127.0.0.1:1")
    assert api("viewer").post(f"/api/v1/clusters/{cluster.pk}/check/").status_code == 403


@pytest.mark.kafka
@pytest.mark.django_db(transaction=True)
def test_the_connectivity_check_reports_brokers_and_topic_count(
    api: Api, kafka_clusters: dict[str, str], eager: None
) -> None:
    bootstrap = kafka_clusters["us-west"]
    cluster = Cluster.objects.create(alias="us-west", bootstrap_servers=bootstrap)
    response = api("operator").post(f"/api/v1/clusters/{cluster.pk}/check/")
    assert response.status_code == 202, response.content
    assert response.json()["state"] == "succeeded", response.content
    body = response.json()["result"]
    assert body["ok"] is True
    host, port = bootstrap.rsplit(":", 1)
    assert {"host": host, "port": int(port)}.items() <= body["brokers"][0].items()
    assert isinstance(body["topic_count"], int) and body["topic_count"] >= 0


@pytest.mark.django_db
def test_the_cluster_list_searches_alias_and_bootstrap_servers_and_pages_only_when_asked(api: Api) -> None:
    made = {
        alias: Cluster.objects.create(alias=alias, bootstrap_servers=servers).pk
        for alias, servers in (
            ("us-west", "kafka-w1:9092,kafka-w2:9092"),
            ("us-east", "kafka-e1:9092"),
            ("backup", "vault.example:9093"),
            ("eu-west", "kafka-eu:9092"),
        )
    }
    client = api("viewer")
    plain = client.get("/api/v1/clusters/", {"search": "WEST"}).json()
    assert [c["id"] for c in plain] == [made["us-west"], made["eu-west"]]  # a plain list without limit, by id
    assert [c["alias"] for c in client.get("/api/v1/clusters/", {"search": "vault"}).json()] == ["backup"]
    assert [c["alias"] for c in client.get("/api/v1/clusters/", {"search": "w2:90"}).json()] == ["us-west"]
    assert client.get("/api/v1/clusters/", {"search": "nothing-like-it"}).json() == []
    assert len(client.get("/api/v1/clusters/", {"search": "  "}).json()) == 4  # blank: no filter
    page = client.get("/api/v1/clusters/", {"search": "kafka", "limit": 2, "offset": 1}).json()
    assert (page["count"], [c["alias"] for c in page["results"]]) == (3, ["us-east", "eu-west"])
    assert page["next"] is None and "search=kafka" in page["previous"]
    response = client.get("/api/v1/clusters/", {"search": "kafka", "limit": 2, "offset": "-3"})
    assert (response.status_code, list(response.json())) == (400, ["offset"])
