"""The cluster browser's offset reads are audited, on a fake admin client: a topic's offsets and a consumer group's
offsets each write one record naming the reader, the cluster and what was read, with names and figures only; a list
or a read that found nothing writes none."""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

import pytest
from confluent_kafka import ConsumerGroupState, ConsumerGroupTopicPartitions, Node, TopicPartition
from confluent_kafka.admin import (
    ClusterMetadata,
    ConfigEntry,
    ConfigSource,
    ConsumerGroupDescription,
    ConsumerGroupListing,
    ListConsumerGroupsResult,
    ListOffsetsResultInfo,
    MemberAssignment,
    MemberDescription,
    OffsetSpec,
    PartitionMetadata,
    TopicMetadata,
)
from rest_framework.test import APIClient

from controlplane.audit.models import AuditRecord
from controlplane.clusters import browse, reads
from controlplane.clusters.models import Cluster

Api = Callable[[str | None], APIClient]
START, END = {0: 2, 1: 0, 2: 0}, {0: 5, 1: 0, 2: 7}  # orders: 3 + 0 + 7 = 10 records
COMMITTED = {0: 3, 2: 7}
EARLIEST = type(OffsetSpec.earliest())
RETENTION, MEMBER_HOST, MEMBER_CLIENT = "3600000", "/10.1.2.3", "billing-worker-1"


class FakeAdmin:
    """An admin client of a cluster with one topic (``orders``, three partitions) and one group (``billing``)."""

    def list_topics(self, *args: Any, **kwargs: Any) -> ClusterMetadata:
        meta = TopicMetadata()
        meta.topic, meta.partitions = "orders", {p: _partition(p) for p in START}
        metadata = ClusterMetadata()
        metadata.topics["orders"] = meta
        return metadata

    def describe_configs(self, resources: list[Any], **kwargs: Any) -> dict[Any, Future[Any]]:
        entry = ConfigEntry("retention.ms", RETENTION, ConfigSource.DYNAMIC_TOPIC_CONFIG)
        return {resource: _done({"retention.ms": entry}) for resource in resources}

    def list_offsets(self, specs: dict[TopicPartition, Any], **kwargs: Any) -> dict[TopicPartition, Future[Any]]:
        return {
            tp: _done(ListOffsetsResultInfo((START if isinstance(spec, EARLIEST) else END)[tp.partition], -1, -1))
            for tp, spec in specs.items()
        }

    def list_consumer_groups(self, **kwargs: Any) -> Future[ListConsumerGroupsResult]:
        return _done(ListConsumerGroupsResult(valid=[ConsumerGroupListing("billing", False)], errors=[]))

    def describe_consumer_groups(self, group_ids: list[str], **kwargs: Any) -> dict[str, Future[Any]]:
        assigned = MemberAssignment([TopicPartition("orders", 0), TopicPartition("orders", 1)])
        member = MemberDescription("member-1", MEMBER_CLIENT, MEMBER_HOST, assigned)
        stable, node = ConsumerGroupState.STABLE, Node(1, "broker-1", 9092)
        return {g: _done(ConsumerGroupDescription(g, False, [member], "range", stable, node)) for g in group_ids}

    def list_consumer_group_offsets(self, requests: list[Any], **kwargs: Any) -> dict[str, Future[Any]]:
        committed = [TopicPartition("orders", p, offset) for p, offset in COMMITTED.items()]
        return {r.group_id: _done(ConsumerGroupTopicPartitions(r.group_id, committed)) for r in requests}


def _partition(number: int) -> PartitionMetadata:
    partition = PartitionMetadata()
    partition.id, partition.leader, partition.replicas, partition.isrs = number, 1, [1], [1]
    return partition


def _done(value: Any) -> Future[Any]:
    future: Future[Any] = Future()
    future.set_result(value)
    return future


@pytest.fixture
def cluster(db: None, monkeypatch: pytest.MonkeyPatch) -> Cluster:
    monkeypatch.setattr(browse, "admin", lambda cluster: FakeAdmin())
    monkeypatch.setattr(reads, "connectivity_check", lambda cluster: {"ok": True})
    return Cluster.objects.create(alias="us-west", bootstrap_servers="127.0.0.1:1", sasl_password="hunter2")


def url(cluster: Cluster, path: str) -> str:
    return f"/api/v1/clusters/{cluster.pk}/browse/{path}"


def audited(action: str) -> dict[str, Any]:
    """The one record of ``action`` as the audit API shows it, after checking it holds none of what was read
    besides names and figures (no config value, member host or client id, no credential)."""
    (row,) = AuditRecord.objects.filter(action=action)
    text = json.dumps([row.object_repr, row.before, row.after])
    assert all(secret not in text for secret in (RETENTION, MEMBER_HOST, MEMBER_CLIENT, "hunter2")), text
    return {"actor": row.actor_username, "object": (row.object_type, row.object_id), "after": row.after}


def test_a_topics_offsets_read_writes_one_record_with_its_partition_range_and_records_and_a_list_writes_none(
    api: Api, cluster: Cluster
) -> None:
    viewer = api("viewer")
    for path in ("topics/", "groups/", "remote-topics/"):
        assert viewer.get(url(cluster, path)).status_code == 200
    assert viewer.get(url(cluster, "topics/payments/")).status_code == 404

    response = viewer.get(url(cluster, "topics/orders/"))

    assert response.status_code == 200, response.content
    body = response.json()
    assert [p["records"] for p in body["partition_details"]] == [3, 0, 7]
    assert [c["value"] for c in body["configs"]] == [RETENTION]
    assert AuditRecord.objects.count() == 1
    assert audited("cluster.read_topic_offsets") == {
        "actor": "viewer-user",
        "object": ("clusters.cluster", str(cluster.pk)),
        "after": {
            "cluster": "us-west",
            "topic": "orders",
            "partitions": 3,
            "partition_range": [0, 2],
            "end_offset": 12,
            "records": 10,
        },
    }


def test_reading_a_consumer_groups_offsets_writes_one_record_naming_the_group_and_what_came_back(
    api: Api, cluster: Cluster
) -> None:
    response = api("operator").get(url(cluster, "groups/billing/"))

    assert response.status_code == 200, response.content
    body = response.json()
    assert [(o["partition"], o["committed_offset"]) for o in body["offsets"]] == [(0, 3), (1, None), (2, 7)]
    assert [(m["client_id"], m["host"]) for m in body["member_details"]] == [(MEMBER_CLIENT, MEMBER_HOST)]
    assert audited("cluster.read_group_offsets") == {
        "actor": "operator-user",
        "object": ("clusters.cluster", str(cluster.pk)),
        "after": {"cluster": "us-west", "group": "billing", "topics": 1, "partitions": 3, "committed": 2},
    }
    listed = api("viewer").get("/api/v1/audit/", {"action": "cluster.read_group_offsets"}).json()["results"]
    assert [(r["actor"], r["object_repr"]) for r in listed] == [("operator-user", "us-west")]
