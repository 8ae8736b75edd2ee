"""Bootstrap servers are host:port with an RFC 1123 name or an IP literal (IPv6 in brackets), on every path that
stores or uses them: a refusal is a 400 naming bootstrap_servers and the reason, and nothing is applied."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from rest_framework.test import APIClient

from controlplane.audit.models import AuditRecord
from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow

Api = Callable[[str | None], APIClient]
MARKUP = "<b/id=x>:9092"
REASON = "'<b/id=x>:9092': '<b/id=x>' is not a host name"


@pytest.mark.django_db
@pytest.mark.parametrize("servers", [MARKUP, "kafka_1:9092", "::1:9092", "[kafka]:9092", "a:1,<i>:2"])
def test_a_bad_host_is_a_400_naming_the_field_and_nothing_is_stored(api: Api, servers: str) -> None:
    response = api("admin").post("/api/v1/clusters/", {"alias": "c", "bootstrap_servers": servers}, format="json")

    assert response.status_code == 400
    assert list(response.json()) == ["bootstrap_servers"]
    assert not Cluster.objects.exists() and not AuditRecord.objects.exists()


@pytest.mark.django_db
def test_the_400_says_which_server_and_why(api: Api) -> None:
    response = api("admin").post("/api/v1/clusters/", {"alias": "c", "bootstrap_servers": MARKUP}, format="json")

    [message] = response.json()["bootstrap_servers"]
    assert message.startswith(REASON)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "servers", ["localhost:9092", "127.0.0.1:19092", "kafka-1.us-west.example.com:9092", "[::1]:9092", "a:1, b:2"]
)
def test_names_ip_addresses_and_bracketed_ipv6_are_stored(api: Api, servers: str) -> None:
    response = api("admin").post("/api/v1/clusters/", {"alias": "c", "bootstrap_servers": servers}, format="json")

    assert response.status_code == 201, response.content
    assert Cluster.objects.get().bootstrap_servers == servers


@pytest.mark.django_db
def test_an_edit_with_a_bad_host_applies_nothing(api: Api) -> None:
    cluster = Cluster.objects.create(alias="c", bootstrap_servers="localhost:9092")

    response = api("admin").patch(
        f"/api/v1/clusters/{cluster.pk}/", {"alias": "renamed", "bootstrap_servers": MARKUP}, format="json"
    )

    assert response.status_code == 400
    assert list(response.json()) == ["bootstrap_servers"]
    assert Cluster.objects.values_list("alias", "bootstrap_servers").get() == ("c", "localhost:9092")
    assert not AuditRecord.objects.exists()


@pytest.mark.django_db
def test_checking_unsaved_settings_with_a_bad_host_is_a_400(api: Api) -> None:
    response = api("admin").post("/api/v1/clusters/check/", {"alias": "c", "bootstrap_servers": MARKUP}, format="json")

    assert response.status_code == 400
    assert response.json()["bootstrap_servers"][0].startswith(REASON)


@pytest.mark.django_db
def test_the_mm2_import_refuses_a_bad_host_once_with_its_line(api: Api) -> None:
    text = f"clusters = a, b\na.bootstrap.servers = {MARKUP}\nb.bootstrap.servers = [::1]:9092\na->b.enabled = true\n"

    response = api("admin").post("/api/v1/flows/import/", text, content_type="text/plain")

    assert response.status_code == 400
    [problem] = response.json()["properties"]
    assert problem.startswith(f"line 2: a.bootstrap.servers: {REASON}")
    assert not Cluster.objects.exists() and not Flow.objects.exists()
