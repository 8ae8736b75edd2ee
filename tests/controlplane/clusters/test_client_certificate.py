"""A cluster's client certificate (mTLS): the certificate is shown, its private key is write-only, checked against the
certificate, stored encrypted, handed to librdkafka, and cleared like the SASL password when the cluster is
re-targeted."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from rest_framework.test import APIClient

from controlplane.audit.models import AuditRecord
from controlplane.clusters.models import Cluster
from controlplane.clusters.services import client_settings
from controlplane.flows.models import Flow
from localkafka.security import certificate_pem, issue, key_pem, new_ca

pytestmark = pytest.mark.django_db


def _client_pair(name: str = "replicator") -> tuple[str, str]:
    ca_key, ca_cert = new_ca("test CA")
    key, cert = issue(ca_key, ca_cert, name)
    return certificate_pem(cert).decode(), key_pem(key).decode()


CERTIFICATE, KEY = _client_pair()


def _mtls(**fields: Any) -> dict[str, Any]:
    return {
        "alias": "vault",
        "bootstrap_servers": "127.0.0.1:9093",
        "security_protocol": "SSL",
        "ssl_certificate_pem": CERTIFICATE,
        "ssl_key_pem": KEY,
        **fields,
    }


def test_the_key_is_stored_encrypted_never_shown_and_given_to_librdkafka(api: Callable[..., APIClient]) -> None:
    response = api("admin").post("/api/v1/clusters/", _mtls(), format="json")

    assert response.status_code == 201, response.content
    body = response.json()
    assert body["ssl_certificate_pem"] == CERTIFICATE.strip() and body["has_ssl_key"] is True
    assert "ssl_key_pem" not in body and "PRIVATE KEY" not in response.content.decode()
    cluster = Cluster.objects.get(alias="vault")
    assert "PRIVATE KEY" not in cluster.ssl_key_pem_encrypted
    settings = client_settings(cluster)
    assert settings["ssl.certificate.pem"] == CERTIFICATE.strip() and settings["ssl.key.pem"] == KEY
    listed = api("viewer").get(f"/api/v1/clusters/{cluster.pk}/").content.decode()
    assert "PRIVATE KEY" not in listed
    audits = json.dumps([[r.before, r.after] for r in AuditRecord.objects.all()])
    assert "PRIVATE KEY" not in audits


@pytest.mark.parametrize(
    ("fields", "field", "reason"),
    [
        ({"ssl_key_pem": ""}, "ssl_key_pem", "required with ssl_certificate_pem"),
        ({"ssl_certificate_pem": ""}, "ssl_certificate_pem", "required with ssl_key_pem"),
        ({"ssl_key_pem": _client_pair("other")[1]}, "ssl_key_pem", "is not the private key of ssl_certificate_pem"),
        ({"ssl_key_pem": "-----BEGIN PRIVATE KEY-----\nnot\n-----END PRIVATE KEY-----\n"}, "ssl_key_pem", "is not"),
        ({"ssl_certificate_pem": "junk"}, "ssl_certificate_pem", "is not a PEM-encoded X.509 certificate"),
        ({"security_protocol": "PLAINTEXT"}, "ssl_certificate_pem", "only used with SSL or SASL_SSL"),
    ],
)
def test_a_bad_certificate_or_key_is_a_400_naming_the_field(
    api: Callable[..., APIClient], fields: dict[str, Any], field: str, reason: str
) -> None:
    response = api("admin").post("/api/v1/clusters/", _mtls(**fields), format="json")

    assert response.status_code == 400, response.content
    assert reason in " ".join(response.json()[field])
    assert not Cluster.objects.exists()


def test_an_encrypted_key_is_refused_since_librdkafka_is_given_no_passphrase(api: Callable[..., APIClient]) -> None:
    key = serialization.load_pem_private_key(KEY.encode(), password=None)
    encrypted = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"passphrase"),
    ).decode()
    response = api("admin").post("/api/v1/clusters/", _mtls(ssl_key_pem=encrypted), format="json")

    assert response.status_code == 400
    assert response.json()["ssl_key_pem"] == ["is not an unencrypted PEM private key"]


def test_re_targeting_the_cluster_clears_the_key_unless_it_is_given_again(api: Callable[..., APIClient]) -> None:
    admin = api("admin")
    created = admin.post("/api/v1/clusters/", _mtls(), format="json").json()
    url = f"/api/v1/clusters/{created['id']}/"

    kept = admin.patch(url, {"sasl_username": ""}, format="json")
    assert kept.status_code == 200 and kept.json()["has_ssl_key"] is True

    moved = admin.patch(url, {"bootstrap_servers": "127.0.0.1:9094"}, format="json")
    assert moved.status_code == 200, moved.content
    assert moved.json()["has_ssl_key"] is False
    assert "ssl.key.pem" not in client_settings(Cluster.objects.get(pk=created["id"]))

    again = admin.patch(url, {"bootstrap_servers": "127.0.0.1:9095", "ssl_key_pem": KEY}, format="json")
    assert again.status_code == 200 and again.json()["has_ssl_key"] is True


def test_a_new_certificate_needs_its_key_again(api: Callable[..., APIClient]) -> None:
    admin = api("admin")
    created = admin.post("/api/v1/clusters/", _mtls(), format="json").json()
    certificate, key = _client_pair("rotated")

    alone = admin.patch(f"/api/v1/clusters/{created['id']}/", {"ssl_certificate_pem": certificate}, format="json")
    assert alone.status_code == 400 and alone.json()["ssl_key_pem"] == ["required with ssl_certificate_pem"]

    both = {"ssl_certificate_pem": certificate, "ssl_key_pem": key}
    assert admin.patch(f"/api/v1/clusters/{created['id']}/", both, format="json").status_code == 200
    assert client_settings(Cluster.objects.get(pk=created["id"]))["ssl.key.pem"] == key


def _mtls_file(certificate: str, key: str) -> str:
    def escaped(pem: str) -> str:  # one properties line: Java's \n escapes
        return pem.strip().replace("\n", "\\n")

    return (
        "clusters = vault, plain\n"
        "vault.bootstrap.servers = 127.0.0.1:9093\n"
        "vault.security.protocol = SSL\n"
        f"vault.ssl.certificate.pem = {escaped(certificate)}\n"
        f"vault.ssl.key.pem = {escaped(key)}\n"
        "plain.bootstrap.servers = 127.0.0.1:9094\n"
        "plain->vault.enabled = true\n"
    )


def test_an_mm2_import_stores_the_key_and_its_export_hides_it_and_imports_back_unchanged(
    api: Callable[..., APIClient],
) -> None:
    admin = api("admin")
    created = admin.post("/api/v1/flows/import/", _mtls_file(CERTIFICATE, KEY), content_type="text/plain")
    assert created.status_code == 201, created.content
    assert "PRIVATE KEY" not in created.content.decode()
    cluster = Cluster.objects.get(alias="vault")
    assert client_settings(cluster)["ssl.key.pem"].strip() == KEY.strip()

    exported = admin.get("/api/v1/flows/export/").content.decode()
    assert "PRIVATE KEY" not in exported and "vault.ssl.key.pem = ********" in exported
    again = admin.post("/api/v1/flows/import/", exported, content_type="text/plain")
    assert again.status_code in (200, 201), again.content
    assert again.json()["counts"]["clusters"].get("unchanged") == 2, again.json()
    assert client_settings(Cluster.objects.get(alias="vault"))["ssl.key.pem"].strip() == KEY.strip()

    Flow.objects.all().delete()
    Cluster.objects.all().delete()
    refused = admin.post("/api/v1/flows/import/", exported, content_type="text/plain")
    assert refused.status_code == 400
    assert "vault.ssl.key.pem" in refused.content.decode() and "give the key" in refused.content.decode()
