"""The cluster browser over the API on real brokers: topics with their partitions and offsets, a consumer group's
committed offsets and lag, remote topics with where they came from, the flows of each topic, paging and search."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator

import pytest
from rest_framework.test import APIClient

from controlplane.clusters.models import Cluster
from controlplane.core.pagination import MAX_OFFSET
from tests.support.browse import Browsed, produce, seed
from tests.support.kafka import admin, create_topic

Api = Callable[[str | None], APIClient]


@pytest.fixture
def browsed(kafka_clusters: dict[str, str]) -> Iterator[Browsed]:
    seeded = seed(kafka_clusters)
    try:
        yield seeded
    finally:
        seeded.member.close()


def url(cluster: Cluster, path: str) -> str:
    return f"/api/v1/clusters/{cluster.pk}/browse/{path}"


@pytest.mark.kafka
@pytest.mark.django_db
def test_a_viewer_sees_the_topic_its_partitions_offsets_configs_and_flow(api: Api, browsed: Browsed) -> None:
    viewer, flow, topic = api("viewer"), browsed.flow, browsed.topic
    expected_flow = {
        "id": flow.pk,
        "name": flow.name,
        "role": "source",
        "source_topic": topic,
        "remote_topic": f"{browsed.source.alias}.{topic}",
    }

    listed = viewer.get(url(browsed.source, "topics/"), {"search": topic})
    assert listed.status_code == 200, listed.content
    assert listed.json() == {
        "count": 1,
        "results": [
            {
                "topic": topic,
                "partitions": 3,
                "replication_factor": 1,
                "internal": False,
                "end_offset": 12,
                "records": 10,
                "flows": [expected_flow],
            }
        ],
    }

    detail = viewer.get(url(browsed.source, f"topics/{topic}/"))
    assert detail.status_code == 200, detail.content
    body = detail.json()
    assert body["records"] == 10 and body["flows"] == [expected_flow]
    broker = body["partition_details"][0]["leader"]
    assert isinstance(broker, int)
    assert body["partition_details"] == [
        {"partition": 0, "leader": broker, "replicas": [broker], "isr": [broker], "start_offset": 2, "end_offset": 5,
         "records": 3},
        {"partition": 1, "leader": broker, "replicas": [broker], "isr": [broker], "start_offset": 0, "end_offset": 0,
         "records": 0},
        {"partition": 2, "leader": broker, "replicas": [broker], "isr": [broker], "start_offset": 0, "end_offset": 7,
         "records": 7},
    ]  # fmt: skip
    topic_own = [c for c in body["configs"] if c["source"] == "DYNAMIC_TOPIC_CONFIG"]
    assert topic_own == [{"name": "retention.ms", "value": "3600000", "source": "DYNAMIC_TOPIC_CONFIG"}]


@pytest.mark.kafka
@pytest.mark.django_db
def test_a_group_shows_its_member_committed_offsets_and_lag_with_nothing_committed_said(
    api: Api, browsed: Browsed
) -> None:
    viewer, topic = api("viewer"), browsed.topic

    listed = viewer.get(url(browsed.source, "groups/"), {"search": browsed.group})
    assert listed.status_code == 200, listed.content
    assert listed.json() == {
        "count": 1,
        "results": [{"group": browsed.group, "state": "STABLE", "members": 1, "simple": False}],
    }

    detail = viewer.get(url(browsed.source, f"groups/{browsed.group}/"))
    assert detail.status_code == 200, detail.content
    body = detail.json()
    assert body["state"] == "STABLE" and body["assignor"] == "range" and body["members"] == 1
    (member,) = body["member_details"]
    assert member["client_id"] == "browse-test" and member["host"]
    assert member["assignment"] == [{"topic": topic, "partition": p} for p in range(3)]
    assert body["offsets"] == [
        {"topic": topic, "partition": 0, "committed_offset": 3, "end_offset": 5, "lag": 2, "client_id": "browse-test"},
        {"topic": topic, "partition": 1, "committed_offset": None, "end_offset": 0, "lag": None,
         "client_id": "browse-test"},
        {"topic": topic, "partition": 2, "committed_offset": 7, "end_offset": 7, "lag": 0, "client_id": "browse-test"},
    ]  # fmt: skip


@pytest.mark.kafka
@pytest.mark.django_db
def test_search_ignores_case_and_pages_come_in_name_order(api: Api, kafka_clusters: dict[str, str]) -> None:
    prefix = f"page-{uuid.uuid4().hex[:8]}"
    cluster = Cluster.objects.create(alias="pages", bootstrap_servers=kafka_clusters["backup"])
    for suffix in ("c", "a", "b"):
        create_topic(cluster.bootstrap_servers, f"{prefix}-{suffix}")
    viewer = api("viewer")

    def page(**query: object) -> tuple[int, list[str]]:
        body = viewer.get(url(cluster, "topics/"), {"search": prefix.upper(), **query}).json()
        return body["count"], [row["topic"] for row in body["results"]]

    assert page(limit=2) == (3, [f"{prefix}-a", f"{prefix}-b"])
    assert page(limit=2, offset=2) == (3, [f"{prefix}-c"])
    assert page(offset=3) == (3, [])
    empty = viewer.get(url(cluster, "groups/"), {"search": f"{prefix}-no-such-group"}).json()
    assert empty == {"count": 0, "results": []}


@pytest.mark.kafka
@pytest.mark.django_db
def test_remote_topics_name_their_source_the_flow_writing_them_and_the_upstream_clusters(
    api: Api, browsed: Browsed
) -> None:
    near, far, topic = browsed.source.alias, f"far{uuid.uuid4().hex[:8]}", browsed.topic
    for name in (f"{near}.{topic}", f"{near}.heartbeats", f"{near}.{far}.heartbeats"):
        create_topic(browsed.target.bootstrap_servers, name)
    produce(browsed.target.bootstrap_servers, f"{near}.{topic}", {0: 4})

    response = api("viewer").get(url(browsed.target, "remote-topics/"), {"search": near})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["count"] == 3
    assert [row["topic"] for row in body["results"]] == sorted([f"{near}.{topic}", f"{near}.heartbeats",
                                                                f"{near}.{far}.heartbeats"])  # fmt: skip
    remote = next(row for row in body["results"] if row["topic"] == f"{near}.{topic}")
    assert remote == {
        "topic": f"{near}.{topic}",
        "partitions": 1,
        "replication_factor": 1,
        "internal": False,
        "end_offset": 4,
        "records": 4,
        "source": near,
        "source_chain": [near],
        "upstream_topic": topic,
        "original_topic": topic,
        "flows": [
            {"id": browsed.flow.pk, "name": browsed.flow.name, "role": "target", "source_topic": topic,
             "remote_topic": f"{near}.{topic}"}
        ],
    }  # fmt: skip
    two_hops = next(row for row in body["results"] if row["topic"] == f"{near}.{far}.heartbeats")
    assert two_hops["source_chain"] == [near, far] and two_hops["original_topic"] == "heartbeats"
    assert {"alias": near, "hops": 1, "flow": browsed.flow.pk} in body["upstream"]
    assert {"alias": far, "hops": 2, "flow": None} in body["upstream"]
    # The topics list of the target names the flow that writes the remote topic too.
    listed = api("viewer").get(url(browsed.target, "topics/"), {"search": f"{near}.{topic}"}).json()
    assert listed["results"][0]["flows"] == remote["flows"]


@pytest.mark.kafka
@pytest.mark.django_db
def test_an_unknown_topic_or_group_is_a_404(api: Api, kafka_clusters: dict[str, str]) -> None:
    cluster = Cluster.objects.create(alias="us-west", bootstrap_servers=kafka_clusters["us-west"])
    viewer, missing = api("viewer"), f"missing-{uuid.uuid4().hex[:8]}"

    topic = viewer.get(url(cluster, f"topics/{missing}/"))
    group = viewer.get(url(cluster, f"groups/{missing}/"))

    assert (topic.status_code, topic.json()) == (404, {"detail": f"us-west: no topic '{missing}'"})
    assert (group.status_code, group.json()) == (404, {"detail": f"us-west: no consumer group '{missing}'"})
    # The topic was only looked up, never created by the lookup.
    assert missing not in admin(cluster.bootstrap_servers).list_topics(timeout=10).topics


@pytest.mark.django_db
def test_an_unknown_cluster_is_a_404(api: Api) -> None:
    assert api("viewer").get("/api/v1/clusters/999999/browse/topics/").status_code == 404


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"limit": "0"}, "limit"),
        ({"limit": "1001"}, "limit"),
        ({"limit": "ten"}, "limit"),
        ({"offset": "-1"}, "offset"),
        ({"offset": str(MAX_OFFSET + 1)}, "offset"),
        ({"offset": "abc"}, "offset"),
        ({"search": "x" * 256}, "search"),
        ({"search": "a\x00b"}, "search"),
    ],
)
@pytest.mark.parametrize("path", ["topics/", "groups/", "remote-topics/"])
def test_a_bad_page_query_is_a_400_naming_the_field_before_any_kafka_call(
    api: Api, query: dict[str, str], field: str, path: str
) -> None:
    # A closed port: a Kafka call would answer 400 too, but naming the cluster rather than the field.
    cluster = Cluster.objects.create(alias="us-west", bootstrap_servers="127.0.0.1:1")
    response = api("viewer").get(url(cluster, path), query)
    assert response.status_code == 400, response.content
    assert list(response.json()) == [field]


@pytest.mark.django_db
def test_a_group_id_with_a_nul_byte_is_a_400_naming_it(api: Api) -> None:
    cluster = Cluster.objects.create(alias="us-west", bootstrap_servers="127.0.0.1:1")
    response = api("viewer").get(url(cluster, "groups/a%00b/"))
    assert (response.status_code, list(response.json())) == (400, ["group"])


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["topics/", "topics/orders/", "groups/", "groups/billing/", "remote-topics/"])
def test_a_user_without_a_role_is_refused_and_nothing_is_writable(api: Api, path: str) -> None:
    cluster = Cluster.objects.create(alias="us-west", bootstrap_servers="127.0.0.1:1")
    assert api("nobody").get(url(cluster, path)).status_code == 403
    assert api(None).get(url(cluster, path)).status_code in (401, 403)
    for method in ("post", "put", "patch", "delete"):
        assert getattr(api("admin"), method)(url(cluster, path)).status_code == 405
