"""Schemathesis fuzzes every operation of /api/schema/ as an admin, through the WSGI app: no 5xx anywhere, and
every answer is one the schema documents (its status code, its content type, a body matching its schema)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any

import pytest
import schemathesis
from confluent_kafka import ConsumerGroupState, ConsumerGroupTopicPartitions, Node
from confluent_kafka.admin import ClusterMetadata, ConsumerGroupDescription, ListConsumerGroupsResult
from django.contrib.auth.models import User
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from django.test import Client
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings
from rest_framework.renderers import JSONRenderer
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.specs.openapi.schemas import OpenApiSchema

from controlplane.accounts.models import ApiToken
from controlplane.clusters import browse, reads
from controlplane.clusters import services as cluster_services
from controlplane.clusters.models import Cluster
from controlplane.flows import mirror, offsets, records
from controlplane.flows.models import Flow
from controlplane.wsgi import application
from replication.offsets.mirrorclient import MirrorClient
from tests.support.fuzz import often_an_existing_id, often_existing_aliases

# The seeded admin's token secret, set by the `seeded` fixture.
_admin_token: dict[str, str] = {}


def _unreachable(cluster: Cluster, timeout: float = 5.0) -> dict[str, Any]:
    # Fuzzed bootstrap servers must not make the test dial random hosts.
    return {"ok": False, "error": f"{cluster.bootstrap_servers}: not dialled by the fuzz test"}


def _reachable(cluster: Cluster, timeout: float = 5.0) -> dict[str, Any]:
    # Reads check their cluster first; the fuzz test's reads then see no Kafka data (below) instead of dialling.
    return {"ok": True, "brokers": [], "topic_count": 0}


class _NoKafkaMirrorClient(MirrorClient):
    """MirrorClient reading an empty topic list instead of dialling the fuzzed clusters."""

    def topics(self) -> set[str]:
        return set()


class _NoKafkaAdmin:
    """The cluster browser's admin client of an empty cluster (no topics, no groups), instead of dialling."""

    def list_topics(self, *args: Any, **kwargs: Any) -> ClusterMetadata:
        return ClusterMetadata()

    def list_consumer_groups(self, **kwargs: Any) -> Future[ListConsumerGroupsResult]:
        return _done(ListConsumerGroupsResult(valid=[], errors=[]))

    def describe_consumer_groups(self, group_ids: list[str], **kwargs: Any) -> dict[str, Future[Any]]:
        dead = ConsumerGroupState.DEAD
        return {g: _done(ConsumerGroupDescription(g, True, [], "", dead, Node(0, "", 0))) for g in group_ids}

    def list_consumer_group_offsets(self, requests: list[Any], **kwargs: Any) -> dict[str, Future[Any]]:
        return {r.group_id: _done(ConsumerGroupTopicPartitions(r.group_id, [])) for r in requests}


def _no_records(config: Any, remote: str, query: Any) -> dict[str, Any]:
    """An empty source partition and remote partition, instead of dialling."""
    empty = {"start_offset": 0, "end_offset": 0}
    fields = {"topic": query.topic, "partition": query.partition, "remote_topic": remote, "contents": True}
    return {**fields, "render": query.render, "source": empty, "target": empty, "records": [], "next_offset": None}


def _done(value: Any) -> Future[Any]:
    future: Future[Any] = Future()
    future.set_result(value)
    return future


def _load_schema() -> OpenApiSchema:
    """The schema /api/schema/ serves, generated in-process (collection time has no database for a login)."""
    raw = json.loads(JSONRenderer().render(SchemaGenerator().get_schema(request=None, public=True)))
    loaded = schemathesis.openapi.from_dict(raw)
    loaded.app = application  # requests go through the WSGI app, inside the test's transaction
    return loaded


schema = _load_schema()
# Fixed primary keys, far above what the sequences hand out to rows the fuzzer creates.
SEEDED_IDS = (900001, 900002, 900003)
SEEDED_ALIASES = ("us-west", "us-east", "backup")


schema.hook("map_path_parameters")(often_an_existing_id(SEEDED_IDS))
schema.hook("map_body")(often_existing_aliases(SEEDED_ALIASES))


@pytest.fixture(autouse=True)
def keep_the_test_connection() -> Iterator[None]:
    """As Django's test client does: the WSGI app must not close the connection holding the test's transaction
    (on Postgres, close_old_connections would, since the transaction turned autocommit off)."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture(autouse=True)
def seeded(db: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """An admin token, three clusters and two flows, so fuzzed ids and aliases sometimes hit real rows."""
    monkeypatch.setattr(cluster_services, "connectivity_check", _unreachable)
    monkeypatch.setattr(reads, "connectivity_check", _reachable)
    monkeypatch.setattr(mirror, "MirrorClient", _NoKafkaMirrorClient)
    monkeypatch.setattr(browse, "admin", lambda cluster: _NoKafkaAdmin())
    monkeypatch.setattr(offsets, "checkpoints", lambda flow, group=None: [])
    monkeypatch.setattr(offsets, "translated_offsets", lambda flow, group: [])
    monkeypatch.setattr(records, "_read", _no_records)
    admin = User.objects.create_superuser("fuzz-admin", password="unused")
    _admin_token["secret"] = ApiToken.objects.create(user=admin)[1]
    west, east, backup = (
        Cluster.objects.create(pk=pk, alias=alias, bootstrap_servers=f"{alias}:9092")
        for pk, alias in zip(SEEDED_IDS, SEEDED_ALIASES, strict=True)
    )
    Flow.objects.create(pk=SEEDED_IDS[0], source=west, target=east)
    Flow.objects.create(pk=SEEDED_IDS[1], source=east, target=backup)


def test_the_served_schema_is_the_fuzzed_one(seeded: None) -> None:
    response = Client().get("/api/schema/?format=json", HTTP_AUTHORIZATION=_auth()["Authorization"])
    assert response.status_code == 200
    assert set(response.json()["paths"]) == set(schema.raw_schema["paths"])


def _auth() -> dict[str, str]:
    return {"Authorization": f"Token {_admin_token['secret']}"}


CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@schema.parametrize()
@settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck))
def test_every_operation_answers_as_documented_and_never_with_a_server_error(case: schemathesis.Case) -> None:
    case.call_and_validate(headers=_auth(), checks=CHECKS)
