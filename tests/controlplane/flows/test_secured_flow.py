"""Through the control plane, on real secured brokers: clusters registered over the API with their credentials (a
SCRAM user and password with the CA; a client certificate and key with the CA), a flow created over the API, and
a Celery worker and beat running it as a principal granted exactly `flow_grants` on each cluster."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import (
    NewTopic,
)
from rest_framework.test import APIClient

from controlplane.flows.models import Flow
from controlplane.flows.services import flow_config
from localkafka import LocalKafka
from localkafka.security import ADMIN, REPLICATOR
from replication.kafka.acls import flow_grants
from tests.support.celery import Processes, celery_env, celery_processes, start_celery
from tests.support.kafka import admin as kafka_admin
from tests.support.kafka import wait_until

pytestmark = [pytest.mark.kafka, pytest.mark.django_db(transaction=True)]
__all__ = ["celery_env", "celery_processes"]  # fixtures
SOURCE, TARGET = "sec-scram", "sec-mtls"
PRINCIPAL = f"User:{REPLICATOR}"
RECORDS, PARTITIONS = 300, 2


def _register(api: APIClient, kafka: LocalKafka) -> None:
    """Both clusters as an operator would enter them: the replicator's credentials, and the cluster's CA."""
    scram = kafka.client_config(SOURCE, REPLICATOR)
    mtls = kafka.cluster(TARGET).spec.material
    clusters = [
        {
            "alias": SOURCE,
            "bootstrap_servers": scram["bootstrap.servers"],
            "security_protocol": "SASL_SSL",
            "sasl_mechanism": "SCRAM-SHA-512",
            "sasl_username": scram["sasl.username"],
            "sasl_password": scram["sasl.password"],
            "ssl_ca_pem": Path(scram["ssl.ca.location"]).read_text(),
        },
        {
            "alias": TARGET,
            "bootstrap_servers": kafka.bootstraps()[TARGET],
            "security_protocol": "SSL",
            "ssl_ca_pem": mtls.ca.read_text(),
            "ssl_certificate_pem": mtls.certificate(REPLICATOR).read_text(),
            "ssl_key_pem": mtls.key(REPLICATOR).read_text(),
        },
    ]
    for data in clusters:
        response = api.post("/api/v1/clusters/", data, format="json")
        assert response.status_code == 201, response.content


def _committed(config: dict[str, str], group: str, topic: str) -> list[int]:
    consumer = Consumer({**config, "group.id": group, "enable.auto.commit": False})
    try:
        return [tp.offset for tp in consumer.committed([TopicPartition(topic, p) for p in range(PARTITIONS)], 10)]
    except KafkaException:
        return []
    finally:
        consumer.close()


def _end_offsets(config: dict[str, str], topic: str) -> int:
    consumer = Consumer({**config, "group.id": "ends"})
    try:
        return sum(consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1] for p in range(PARTITIONS))
    except KafkaException:
        return 0
    finally:
        consumer.close()


def test_the_control_plane_runs_a_flow_from_scram_into_mtls_with_exactly_its_grants(
    secured_kafka: LocalKafka,
    replicator_grants_revoked: None,
    api: Callable[[str | None], APIClient],
    celery_env: dict[str, str],
    celery_processes: Processes,
    tmp_path: Path,
) -> None:
    tag = uuid.uuid4().hex[:8]
    topic, group, remote = f"payments-{tag}", f"billing-{tag}", f"{SOURCE}.payments-{tag}"
    source_admin = kafka_admin(secured_kafka.client_config(SOURCE, ADMIN))
    source_admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(timeout=30)
    producer = Producer(secured_kafka.client_config(SOURCE, ADMIN))
    for i in range(RECORDS):
        producer.produce(topic, f"payment-{i}".encode(), partition=i % PARTITIONS)
    assert producer.flush(30) == 0
    app = Consumer({**secured_kafka.client_config(SOURCE, ADMIN), "group.id": group, "enable.auto.commit": False})
    _commit(app, topic)
    app.close()

    admin = api("admin")
    _register(admin, secured_kafka)
    created = admin.post(
        "/api/v1/flows/",
        {
            "source": SOURCE,
            "target": TARGET,
            "topics": [topic],
            "groups": [group],
            "sync_group_offsets_enabled": True,
            "emit_checkpoints_interval_seconds": 1,
            "sync_group_offsets_interval_seconds": 1,
            "refresh_groups_interval_seconds": 1,
            "refresh_topics_interval_seconds": 1,
        },
        format="json",
    )
    assert created.status_code == 201, created.content
    flow = Flow.objects.select_related("source", "target").get(pk=created.json()["id"])
    for grant in flow_grants(flow_config(flow), [topic], [group]):
        cluster_admin = kafka_admin(secured_kafka.client_config(SOURCE if grant.cluster == "source" else TARGET, ADMIN))
        binding = grant.binding(PRINCIPAL)
        cluster_admin.create_acls([binding])[binding].result(timeout=30)

    start_celery(celery_env, celery_processes, tmp_path, "w1", "beat")
    target = secured_kafka.client_config(TARGET, ADMIN)
    wait_until(lambda: _end_offsets(target, remote) >= RECORDS, timeout=120, interval=1, what="every record copied")
    wait_until(
        lambda: _committed(target, group, remote) == [100, 50], timeout=90, interval=1, what="the group's offsets"
    )
    status = admin.get(f"/api/v1/flows/{flow.pk}/status/").json()
    assert [(t["state"], t["last_error"], t["fault"]) for t in status["tasks"]] == [("RUNNING", "", None)], status
    logs = "".join(path.read_text() for path in tmp_path.glob("*.log"))
    assert "authorization failed" not in logs.lower()
    assert secured_kafka.cluster(SOURCE).spec.material.password(REPLICATOR) not in logs
    assert "PRIVATE KEY" not in logs


def _commit(consumer: Consumer, topic: str) -> None:
    """Commit the source group's offsets, waiting out a fresh cluster's coordinator load."""

    def committed() -> bool:
        try:
            consumer.commit(offsets=[TopicPartition(topic, 0, 100), TopicPartition(topic, 1, 50)], asynchronous=False)
            return True
        except KafkaException:
            return False

    wait_until(committed, what="a commit on the source")
