"""A cluster password goes in through the API and comes out in no response body and no log line."""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest
from rest_framework.test import APIClient

from controlplane.clusters.models import Cluster
from controlplane.clusters.services import client_settings

Api = Callable[[str | None], APIClient]
PASSWORD = "s3cr3t-Pa55word-XYZ"
IMPORTED_PASSWORD = "imp0rted-Pa55word-QRS"

FILE_WITH_CREDENTIALS = f"""\
clusters = vault, us-east
vault.bootstrap.servers = 127.0.0.1:1
vault.security.protocol = SASL_PLAINTEXT
vault.sasl.mechanism = SCRAM-SHA-256
vault.sasl.username = mirror
vault.sasl.password = {IMPORTED_PASSWORD}
us-east.bootstrap.servers = 127.0.0.1:2
vault->us-east.enabled = true
"""


@pytest.mark.django_db
def test_passwords_appear_in_no_response_and_no_log_line(api: Api, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    admin, bodies = api("admin"), []

    created = admin.post(
        "/api/v1/clusters/",
        {
            "alias": "secure",
            "bootstrap_servers": "127.0.0.1:1",
            "security_protocol": "SASL_PLAINTEXT",
            "sasl_mechanism": "PLAIN",
            "sasl_username": "mirror",
            "sasl_password": PASSWORD,
        },
        format="json",
    )
    assert created.status_code == 201
    pk = created.json()["id"]
    imported = admin.post("/api/v1/flows/import/", FILE_WITH_CREDENTIALS, content_type="text/plain")
    assert imported.status_code == 201, imported.content
    bodies += [created, imported]
    bodies.append(admin.patch(f"/api/v1/clusters/{pk}/", {"sasl_password": PASSWORD + "2"}, format="json"))
    bodies.append(admin.post(f"/api/v1/clusters/{pk}/check/"))  # a queued job: it shows no password
    bodies.append(admin.post("/api/v1/flows/", {"source": "secure", "target": "secure"}, format="json"))
    for url in ("/api/v1/clusters/", f"/api/v1/clusters/{pk}/", "/api/v1/flows/", "/api/v1/flows/export/"):
        bodies.append(admin.get(url))
    bodies.append(admin.get("/api/v1/audit/"))

    assert [r.status_code for r in bodies][2:] == [200, 202, 400, 200, 200, 200, 200, 200]
    # The plain passwords were stored and are usable by the data plane ...
    assert client_settings(Cluster.objects.get(alias="vault"))["sasl.password"] == IMPORTED_PASSWORD
    assert client_settings(Cluster.objects.get(alias="secure"))["sasl.password"] == PASSWORD + "2"
    # ... and nothing else shows them.
    assert any("Bad Request" in record.getMessage() for record in caplog.records)  # the log was captured
    for secret in (PASSWORD, IMPORTED_PASSWORD):
        for response in bodies:
            assert secret not in response.content.decode(), response.request["PATH_INFO"]
        for record in caplog.records:
            assert secret not in record.getMessage() and secret not in str(record.exc_text or "")
    assert "sasl.password = ********" in bodies[-2].content.decode()  # the export says a password is set
    assert '"sasl_password":"********"' in bodies[-1].content.decode().replace(" ", "")  # as does the audit log
