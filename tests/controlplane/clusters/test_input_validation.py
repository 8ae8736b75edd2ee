"""Ports are ASCII digits 1-65535, *_ms flow properties are bounded, a CA certificate is
parsed; every refusal is a 400 naming the field, and nothing of the request is applied."""

from __future__ import annotations

from typing import Any

import pytest

from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from replication.config import PROPERTIES
from tests.support.live import Http
from tests.support.tls import ca_pem

MAX_INTERVALS_MS = {name: prop.maximum for name, prop in PROPERTIES.items() if name.endswith("_ms")}
BAD_SERVERS = ["h:١٢٣", "h:\uff11\uff12\uff13", "h:0", "h:65536", "h:", "h:+1", "h: 1", "h:99999999999999999999"]


@pytest.mark.parametrize("servers", BAD_SERVERS)
@pytest.mark.django_db(transaction=True)
def test_a_port_that_is_not_ascii_digits_in_range_is_refused(live_server: Any, servers: str) -> None:
    response = Http(live_server.url, "admin").post("/api/v1/clusters/", {"alias": "c", "bootstrap_servers": servers})

    assert response.status_code == 400
    assert list(response.json()) == ["bootstrap_servers"]
    assert not Cluster.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_ports_1_and_65535_are_accepted(live_server: Any) -> None:
    servers = "a:1,b.example:65535"
    response = Http(live_server.url, "admin").post("/api/v1/clusters/", {"alias": "c", "bootstrap_servers": servers})

    assert response.status_code == 201, response.text


@pytest.mark.parametrize("pem", ["garbage", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"])
@pytest.mark.django_db(transaction=True)
def test_a_ca_that_is_not_a_pem_certificate_is_refused_and_nothing_is_applied(live_server: Any, pem: str) -> None:
    admin = Http(live_server.url, "admin")
    pk = admin.post("/api/v1/clusters/", {"alias": "c", "bootstrap_servers": "a:1", "security_protocol": "SSL"})
    pk = pk.json()["id"]

    response = admin.patch(f"/api/v1/clusters/{pk}/", {"alias": "renamed", "ssl_ca_pem": pem})

    assert response.status_code == 400
    assert list(response.json()) == ["ssl_ca_pem"]
    assert Cluster.objects.get(pk=pk).alias == "c"


@pytest.mark.django_db(transaction=True)
def test_a_real_ca_certificate_is_accepted(live_server: Any) -> None:
    data = {"alias": "c", "bootstrap_servers": "a:1", "security_protocol": "SSL", "ssl_ca_pem": ca_pem("ca")}

    response = Http(live_server.url, "admin").post("/api/v1/clusters/", data)

    assert response.status_code == 201, response.text


@pytest.mark.parametrize("field", sorted(MAX_INTERVALS_MS))
@pytest.mark.django_db(transaction=True)
def test_millisecond_properties_are_bounded_and_the_400_names_the_field(live_server: Any, field: str) -> None:
    admin = Http(live_server.url, "admin")
    for alias in ("us-west", "us-east"):
        Cluster.objects.create(alias=alias, bootstrap_servers="a:1")
    flow = {"source": "us-west", "target": "us-east"}

    too_big = [admin.post("/api/v1/flows/", {**flow, field: value}) for value in (2**40, MAX_INTERVALS_MS[field] + 1)]
    at_bound = admin.post("/api/v1/flows/", {**flow, field: MAX_INTERVALS_MS[field]})

    assert [r.status_code for r in too_big] == [400, 400]
    assert all(list(r.json()) == [field] for r in too_big)
    assert at_bound.status_code == 201, at_bound.text
    assert Flow.objects.get().__dict__[field] == MAX_INTERVALS_MS[field]
