"""What a page of the cluster browser costs: one metadata call, then offsets for the page's partitions only, in one
batched ListOffsets per offset kind (never one call per partition or per topic), with a timeout on every call."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

import pytest
from confluent_kafka import TopicPartition
from confluent_kafka.admin import ClusterMetadata, ListOffsetsResultInfo, PartitionMetadata, TopicMetadata

from controlplane.clusters import browse, reads
from controlplane.clusters.browse import PageQuery
from controlplane.clusters.models import Cluster

TOPICS = {f"orders-{n}": 4 for n in range(50)}  # 50 topics of 4 partitions: 200 partitions in the cluster


class CountingAdmin:
    """An admin client of a cluster of TOPICS that records every call, its timeout and the partitions asked for."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.asked: list[list[tuple[str, int]]] = []

    def list_topics(self, *args: Any, **kwargs: Any) -> ClusterMetadata:
        self.calls.append(("list_topics", kwargs.get("timeout")))
        metadata = ClusterMetadata()
        for name, count in TOPICS.items():
            meta = TopicMetadata()
            meta.topic, meta.partitions = name, {p: _partition(p) for p in range(count)}
            metadata.topics[name] = meta
        return metadata

    def list_offsets(self, specs: dict[TopicPartition, Any], **kwargs: Any) -> dict[TopicPartition, Future[Any]]:
        self.calls.append(("list_offsets", kwargs.get("request_timeout")))
        self.asked.append(sorted((tp.topic, tp.partition) for tp in specs))
        return {tp: _done(ListOffsetsResultInfo(10 * tp.partition, -1, -1)) for tp in specs}


def _partition(number: int) -> PartitionMetadata:
    partition = PartitionMetadata()
    partition.id, partition.leader, partition.replicas, partition.isrs = number, 1, [1], [1]
    return partition


def _done(value: Any) -> Future[Any]:
    future: Future[Any] = Future()
    future.set_result(value)
    return future


def test_a_page_of_topics_costs_one_metadata_call_and_one_list_offsets_per_kind_for_its_partitions_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    client = CountingAdmin()
    monkeypatch.setattr(browse, "admin", lambda cluster: client)
    monkeypatch.setattr(reads, "connectivity_check", lambda cluster: {"ok": True})

    page = browse.topics(Cluster(alias="us-west", bootstrap_servers="127.0.0.1:1"), PageQuery("ORDERS-1", 3, 2))

    # orders-1, orders-10 ... orders-19 match (11 topics, by name); the page is the third to fifth of them.
    assert page["count"] == 11
    assert [row["topic"] for row in page["results"]] == ["orders-11", "orders-12", "orders-13"]
    assert [name for name, _ in client.calls] == ["list_topics", "list_offsets", "list_offsets"]
    assert all(timeout == browse.READ_TIMEOUT for _, timeout in client.calls)
    page_partitions = sorted((f"orders-1{n}", p) for n in (1, 2, 3) for p in range(4))
    assert client.asked == [page_partitions, page_partitions]
    # Start and end both came back 10 x partition here, so every partition reads as empty.
    assert page["results"][0]["end_offset"] == 60 and page["results"][0]["records"] == 0
