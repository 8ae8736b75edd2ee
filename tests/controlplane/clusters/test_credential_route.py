"""Changing where or how credentials are sent clears the stored SASL password unless the
same request re-enters it, so an admin cannot re-target a cluster to capture it.

The fake broker plays the host the attacker controls; the client is driven the way workers and the check drive
it, through ``client_settings`` of the stored cluster.
"""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient

from controlplane.audit.models import AuditRecord
from controlplane.clusters.models import Cluster
from controlplane.clusters.services import client_settings
from tests.support.fake_sasl_broker import FakeSaslBroker
from tests.support.kafka import wait_until
from tests.support.live import Http
from tests.support.tls import ca_pem

PASSWORD = "st0red-Pa55word-for-the-real-brokers"
NEW_PASSWORD = "re-entered-Pa55word"


def authenticate(cluster: Cluster, broker: FakeSaslBroker) -> None:
    """Connect with the stored cluster's client settings until ``broker`` saw a SASL authentication, or until
    librdkafka refuses the settings (a SASL config with no password: then nothing is sent at all)."""
    try:
        admin = AdminClient({**client_settings(cluster), "log_level": 0})
    except KafkaException:
        return
    before = broker.authentications

    def authenticated() -> bool:
        with contextlib.suppress(KafkaException):
            admin.list_topics(timeout=0.5)
        return broker.authentications > before

    wait_until(authenticated, timeout=20, what=f"a SASL authentication at {broker.bootstrap}")


def sasl_cluster(admin: Http, bootstrap: str, **fields: Any) -> dict[str, Any]:
    data = {
        "alias": "vault",
        "bootstrap_servers": bootstrap,
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "PLAIN",
        "sasl_username": "mirror",
        "sasl_password": PASSWORD,
        **fields,
    }
    response = admin.post("/api/v1/clusters/", data)
    assert response.status_code == 201, response.text
    return dict(response.json())


@pytest.mark.django_db(transaction=True)
def test_a_retargeted_cluster_never_sends_the_stored_password_to_the_new_host(live_server: Any) -> None:
    admin = Http(live_server.url, "admin")
    with FakeSaslBroker() as real, FakeSaslBroker() as attacker:
        pk = sasl_cluster(admin, real.bootstrap)["id"]
        # The listener sees a password when one is sent: the real brokers get it.
        authenticate(Cluster.objects.get(pk=pk), real)
        assert PASSWORD.encode() in real.received()

        patched = admin.patch(f"/api/v1/clusters/{pk}/", {"bootstrap_servers": attacker.bootstrap})
        assert patched.status_code == 200, patched.text
        authenticate(Cluster.objects.get(pk=pk), attacker)

        assert PASSWORD.encode() not in attacker.received()
    assert patched.json()["has_sasl_password"] is False
    assert PASSWORD not in patched.text
    cleared = AuditRecord.objects.get(action="cluster.credentials_cleared", object_id=str(pk))
    assert cleared.after == {"sasl_password": "", "changed": ["bootstrap_servers"]}
    assert cleared.actor_username == admin.user.username


@pytest.mark.django_db(transaction=True)
def test_a_password_re_entered_with_the_new_host_is_the_only_one_it_receives(live_server: Any) -> None:
    admin = Http(live_server.url, "admin")
    with FakeSaslBroker() as new_host:
        pk = sasl_cluster(admin, "127.0.0.1:1")["id"]
        patch = {"bootstrap_servers": new_host.bootstrap, "sasl_password": NEW_PASSWORD}
        assert admin.patch(f"/api/v1/clusters/{pk}/", patch).json()["has_sasl_password"] is True
        authenticate(Cluster.objects.get(pk=pk), new_host)

        assert NEW_PASSWORD.encode() in new_host.received()
        assert PASSWORD.encode() not in new_host.received()
    assert not AuditRecord.objects.filter(action="cluster.credentials_cleared").exists()


ROUTE_CHANGES = {
    "bootstrap_servers": {"bootstrap_servers": "attacker.example:9092"},
    "security_protocol": {"security_protocol": "SASL_PLAINTEXT", "ssl_ca_pem": ""},
    "sasl_mechanism": {"sasl_mechanism": "SCRAM-SHA-256"},
    "ssl_ca_pem": {"ssl_ca_pem": "<other CA>"},
}


@pytest.mark.parametrize("field", ROUTE_CHANGES)
@pytest.mark.django_db(transaction=True)
def test_each_change_of_where_or_how_credentials_go_clears_the_password(live_server: Any, field: str) -> None:
    admin = Http(live_server.url, "admin")
    pk = sasl_cluster(admin, "127.0.0.1:1", security_protocol="SASL_SSL", ssl_ca_pem=ca_pem("first"))["id"]
    change = {name: ca_pem("other") if value == "<other CA>" else value for name, value in ROUTE_CHANGES[field].items()}

    patched = admin.patch(f"/api/v1/clusters/{pk}/", change)

    assert patched.status_code == 200, patched.text
    assert patched.json()["has_sasl_password"] is False
    assert Cluster.objects.get(pk=pk).sasl_password == ""
    assert field in AuditRecord.objects.get(action="cluster.credentials_cleared").after["changed"]


@pytest.mark.django_db(transaction=True)
def test_edits_that_keep_the_route_keep_the_password(live_server: Any) -> None:
    admin = Http(live_server.url, "admin")
    pk = sasl_cluster(admin, "127.0.0.1:1")["id"]
    same = {"alias": "vault2", "sasl_username": "other", "bootstrap_servers": "127.0.0.1:1", "sasl_mechanism": "PLAIN"}

    patched = admin.patch(f"/api/v1/clusters/{pk}/", same)

    assert patched.status_code == 200, patched.text
    assert patched.json()["has_sasl_password"] is True
    assert Cluster.objects.get(pk=pk).sasl_password == PASSWORD


@pytest.mark.django_db
def test_the_rule_lives_in_the_model_for_every_path_that_edits_a_cluster() -> None:
    cluster = Cluster(
        alias="vault",
        bootstrap_servers="a:1",
        security_protocol="SASL_PLAINTEXT",
        sasl_mechanism="PLAIN",
        sasl_username="u",
    )
    cluster.sasl_password = PASSWORD
    cluster.save()

    assert cluster.apply({"sasl_username": "v"}) == []
    assert cluster.sasl_password == PASSWORD
    assert cluster.apply({"bootstrap_servers": "b:1", "security_protocol": "SASL_SSL", "sasl_password": "x"}) == []
    assert cluster.sasl_password == "x"
    assert cluster.apply({"bootstrap_servers": "c:1", "security_protocol": "SASL_PLAINTEXT"}) == [
        "bootstrap_servers",
        "security_protocol",
    ]
    assert not cluster.has_sasl_password
