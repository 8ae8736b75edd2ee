"""The plan's group picker on real brokers: the source's groups that committed in topics the flow replicates, with
their exact lag and the flow's checkpoint freshness; a group of an unrelated topic is not listed."""

from __future__ import annotations

import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
from django.utils import timezone
from rest_framework.test import APIClient

from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from controlplane.monitoring.models import FlowObservation
from tests.support.browse import produce
from tests.support.kafka import admin, create_topic

Api = Callable[[str | None], APIClient]
URL = "/api/v1/failovers/groups/"
PRODUCED = {0: 5, 1: 0, 2: 7}
COMMITTED = {0: 3, 2: 7}  # lag (5 - 3) + (7 - 7) = 2; partition 1 without a commit


@dataclass(frozen=True)
class Picked:
    tag: str
    source: Cluster
    target: Cluster
    flow: Flow
    topic: str


def commit(bootstrap: str, group: str, topic: str, positions: dict[int, int]) -> None:
    """Commit ``positions`` for ``group`` (no member: the group is EMPTY), as an admin commit does."""
    client = admin(bootstrap)
    offsets = [TopicPartition(topic, p, offset) for p, offset in positions.items()]
    future = client.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(group, offsets)])[group]
    future.result(timeout=30)


@pytest.fixture
def picked(kafka_clusters: dict[str, str]) -> Picked:
    tag = uuid.uuid4().hex[:8]
    source = Cluster.objects.create(alias=f"src{tag}", bootstrap_servers=kafka_clusters["us-west"])
    target = Cluster.objects.create(alias=f"dst{tag}", bootstrap_servers=kafka_clusters["us-east"])
    topic, unrelated = f"pick-{tag}-orders", f"other-{tag}-audit"
    flow = Flow.objects.create(source=source, target=target, topics=[f"pick-{tag}-.*"], groups=[f"{tag}-.*"])
    create_topic(source.bootstrap_servers, topic, partitions=3)
    create_topic(source.bootstrap_servers, unrelated, partitions=1)
    produce(source.bootstrap_servers, topic, PRODUCED)
    produce(source.bootstrap_servers, unrelated, {0: 4})
    commit(source.bootstrap_servers, f"{tag}-billing", topic, COMMITTED)
    commit(source.bootstrap_servers, f"{tag}-auditor", unrelated, {0: 1})
    commit(source.bootstrap_servers, f"x{tag}-reports", topic, {0: 5, 2: 1})  # outside the groups filter
    commit(source.bootstrap_servers, f"__mirrorplane-{tag}-facts", topic, {0: 1})  # Mirrorplane's own: never listed
    return Picked(tag, source, target, flow, topic)


def params(p: Picked, **extra: object) -> dict[str, object]:
    return {"source": p.source.alias, "target": p.target.alias, "search": p.tag, **extra}


@pytest.mark.kafka
@pytest.mark.django_db
def test_it_lists_the_groups_of_replicated_topics_with_exact_lag_and_checkpoint_age(api: Api, picked: Picked) -> None:
    stamp = int(time.time() * 1000) - 5000
    FlowObservation.objects.create(
        flow=picked.flow,
        at=timezone.now(),
        checkpoints={f"{picked.tag}-billing": {"timestamp": stamp, "oldest": stamp, "partitions": 2}},
    )

    response = api("operator").get(URL, params(picked))

    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["count"], body["scanned"], body["truncated"], body["checkpoints_error"]) == (2, 3, False, "")
    assert body["checkpoints_read_at"] is not None
    billing, reports = body["results"]
    age = billing.pop("checkpoint_age_seconds")
    assert 4.0 <= age < 60.0
    assert billing == {
        "group": f"{picked.tag}-billing",
        "state": "EMPTY",
        "members": 0,
        "topics": [picked.topic],
        "partitions": 2,
        "lag": 2,
        "in_groups_filter": True,
        "checkpoint_timestamp": stamp,
        "checkpoint_partitions": 2,
    }
    assert reports == {
        "group": f"x{picked.tag}-reports",
        "state": "EMPTY",
        "members": 0,
        "topics": [picked.topic],
        "partitions": 2,
        "lag": 6,  # (5 - 5) + (7 - 1)
        "in_groups_filter": False,
        "checkpoint_timestamp": None,
        "checkpoint_age_seconds": None,
        "checkpoint_partitions": 0,
    }


@pytest.mark.kafka
@pytest.mark.django_db
def test_pages_and_search_narrow_the_list_and_no_checkpoint_read_says_so(api: Api, picked: Picked) -> None:
    operator = api("operator")

    first = operator.get(URL, params(picked, limit=1)).json()
    second = operator.get(URL, params(picked, limit=1, offset=1)).json()
    only = operator.get(URL, params(picked, search=f"{picked.tag}-BILL")).json()

    assert [r["group"] for r in first["results"]] == [f"{picked.tag}-billing"] and first["count"] == 2
    assert [r["group"] for r in second["results"]] == [f"x{picked.tag}-reports"]
    assert [r["group"] for r in only["results"]] == [f"{picked.tag}-billing"] and only["count"] == 1
    assert first["checkpoints_read_at"] is None and first["results"][0]["checkpoint_timestamp"] is None
    none = operator.get(URL, params(picked, search=f"{picked.tag}-auditor")).json()
    assert (none["count"], none["scanned"], none["results"]) == (0, 1, [])


@pytest.mark.django_db
def test_bad_input_is_a_400_naming_the_field(api: Api) -> None:
    west = Cluster.objects.create(alias="us-west", bootstrap_servers="127.0.0.1:1")
    east = Cluster.objects.create(alias="us-east", bootstrap_servers="127.0.0.1:1")
    Flow.objects.create(source=west, target=east)
    operator = api("operator")
    ok = {"source": "us-west", "target": "us-east"}
    cases = [
        ({"target": "us-east"}, "source"),
        ({**ok, "source": "nowhere"}, "source"),
        ({**ok, "source": "us\x00west"}, "source"),
        ({**ok, "target": "us-west"}, "target"),
        ({"source": "us-east", "target": "us-west"}, "target"),  # no flow that way
        ({**ok, "limit": 0}, "limit"),
        ({**ok, "limit": "many"}, "limit"),
        ({**ok, "offset": -1}, "offset"),
        ({**ok, "search": "a\x00"}, "search"),
    ]
    for query, field in cases:
        response = operator.get(URL, query)
        assert response.status_code == 400, (query, response.content)
        assert list(response.json()) == [field], (query, response.json())


@pytest.mark.django_db
def test_only_operators_and_admins_may_list(api: Api) -> None:
    for role in (None, "nobody", "viewer"):
        assert api(role).get(URL, {"source": "a", "target": "b"}).status_code == 403, role


@pytest.mark.django_db
def test_an_unreachable_source_is_a_400_with_the_broker_error_within_seconds(api: Api) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    west = Cluster.objects.create(alias="us-west", bootstrap_servers=f"127.0.0.1:{port}")
    east = Cluster.objects.create(alias="us-east", bootstrap_servers=f"127.0.0.1:{port}")
    Flow.objects.create(source=west, target=east)

    started = time.monotonic()
    response = api("operator").get(URL, {"source": "us-west", "target": "us-east"})

    assert time.monotonic() - started < 6.0
    assert response.status_code == 400, response.content
    detail = response.json()["detail"]
    assert detail.startswith("us-west:") and f"127.0.0.1:{port}" in detail and "Connection refused" in detail
