"""Seeding the demo: on its existing state, a restarted broker that lists no topics yet must not abort the demo; a
secured cluster is registered with its credentials, and its principal granted exactly its flows' ACLs."""

from __future__ import annotations

from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException

from controlplane.clusters.models import Cluster
from controlplane.demo import demo_data
from controlplane.flows.models import Flow
from controlplane.flows.services import flow_config
from controlplane.reports.services import HEARTBEAT_GROUP
from replication.kafka.acls import flow_grants
from tests.support.tls import ca_pem

pytestmark = pytest.mark.django_db
BOOTSTRAPS = {"us-west": "127.0.0.1:1", "us-east": "127.0.0.1:2", "backup": "127.0.0.1:3"}
CA_PEM = ca_pem("demo test CA")


class _Metadata:
    topics: dict[str, Any] = {}


def _admin_answering(code: int) -> type:
    class FakeAdmin:
        created: list[str] = []

        def __init__(self, config: dict[str, str]) -> None:
            pass

        def list_topics(self, timeout: float) -> _Metadata:
            return _Metadata()  # still loading its logs: no topics listed

        def create_topics(self, topics: list[Any]) -> dict[str, Future[None]]:
            futures = {}
            for topic in topics:
                future: Future[None] = Future()
                future.set_exception(KafkaException(KafkaError(code)))
                futures[topic.topic] = future
                FakeAdmin.created.append(topic.topic)
            return futures

    return FakeAdmin


def test_topics_that_already_exist_are_seeded(monkeypatch: pytest.MonkeyPatch) -> None:
    admin = _admin_answering(KafkaError.TOPIC_ALREADY_EXISTS)
    monkeypatch.setattr(demo_data, "AdminClient", admin)
    assert demo_data.seed(BOOTSTRAPS) == ["us-west->us-east", "us-east->backup"]
    assert sorted(admin.created) == ["orders", "payments"]  # type: ignore[attr-defined]
    assert demo_data.seed(BOOTSTRAPS) == []  # idempotent: a second start adds nothing
    assert Flow.objects.count() == 2


def test_any_other_topic_error_still_stops_the_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(demo_data, "AdminClient", _admin_answering(KafkaError.POLICY_VIOLATION))
    with pytest.raises(KafkaException):
        demo_data.seed(BOOTSTRAPS)


class _AclRecorder:
    """An admin client whose topics exist and which records the ACLs it is asked to create."""

    bindings: list[Any] = []

    def __init__(self, config: dict[str, str]) -> None:
        pass

    def list_topics(self, timeout: float) -> _Metadata:
        metadata = _Metadata()
        metadata.topics = dict.fromkeys(demo_data.DEMO_TOPICS)
        return metadata

    def create_acls(self, bindings: list[Any]) -> dict[Any, Future[None]]:
        _AclRecorder.bindings.extend(bindings)
        futures: dict[Any, Future[None]] = {}
        for binding in bindings:
            futures[binding] = Future()
            futures[binding].set_result(None)
        return futures


def _secured(tmp_path: Path, password: str) -> dict[str, demo_data.SecuredCluster]:
    ca = tmp_path / "ca.pem"
    ca.write_text(CA_PEM)
    client = {
        "bootstrap.servers": BOOTSTRAPS["backup"],
        "security.protocol": "SASL_SSL",
        "ssl.ca.location": str(ca),
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "replicator",
        "sasl.password": password,
    }
    return {"backup": demo_data.SecuredCluster("replicator", client, {**client, "sasl.username": "admin"})}


def test_a_secured_cluster_is_registered_with_its_credentials_and_granted_its_flows_acls(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(demo_data, "AdminClient", _AclRecorder)
    _AclRecorder.bindings = []
    demo_data.seed(BOOTSTRAPS, _secured(tmp_path, "first-password"))
    backup = Cluster.objects.get(alias="backup")
    assert (backup.security_protocol, backup.sasl_mechanism, backup.sasl_username) == (
        "SASL_SSL",
        "SCRAM-SHA-512",
        "replicator",
    )
    assert backup.sasl_password == "first-password" and "first-password" not in backup.sasl_password_encrypted
    assert backup.ssl_ca_pem == CA_PEM
    flow = Flow.objects.get(target=backup)
    assert flow.sync_topic_acls_enabled is False  # ACL sync would need ALTER on backup's cluster resource
    granted = {(b.restype.name, b.name, b.resource_pattern_type.name, b.operation.name) for b in _AclRecorder.bindings}
    wanted = {
        (g.resource, g.name, g.pattern, g.operation)
        for g in flow_grants(flow_config(flow), ())
        if g.cluster == "target"
    }
    assert granted == wanted | {("GROUP", HEARTBEAT_GROUP, "LITERAL", "READ")}
    assert {b.principal for b in _AclRecorder.bindings} == {"User:replicator"}
    assert not any(b.restype.name == "BROKER" for b in _AclRecorder.bindings)

    # A restart on a state whose cluster was made again (a new password) registers the new one.
    assert demo_data.seed(BOOTSTRAPS, _secured(tmp_path, "second-password")) == []
    assert Cluster.objects.get(alias="backup").sasl_password == "second-password"
