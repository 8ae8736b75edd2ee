"""A flow's records over the API on real brokers: source records beside their copies with exact bytes and
offsets, a copy found by its source offset, a viewer's metadata-only answer, the audit record, and bad input."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from rest_framework.test import APIClient

from controlplane.audit.models import AuditRecord
from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from tests.support.records import COUNT, SHIFT, known_records, mm2_synced_flow, produce, replicated_flow

Api = Callable[[str | None], APIClient]


def url(flow: Flow, path: str = "") -> str:
    return f"/api/v1/flows/{flow.pk}/records/{path}"


def shown(side: dict[str, object], field: str) -> object:
    rendered = side[field]
    assert isinstance(rendered, dict)
    return rendered["shown"]


@pytest.mark.kafka
@pytest.mark.django_db
def test_records_are_shown_beside_their_copies_found_by_offset_syncs(api: Api, kafka_clusters: dict[str, str]) -> None:
    seeded = replicated_flow(kafka_clusters)
    flow, operator = seeded.flow, api("operator")
    query = {"topic": seeded.topic, "partition": 0, "offset": 2, "limit": 4, "render": "json"}

    response = operator.get(url(flow), query)
    assert response.status_code == 200, response.content
    found = response.json()
    assert (found["remote_topic"], found["contents"]) == (seeded.remote, True)
    assert found["source"] == {"start_offset": 0, "end_offset": COUNT}
    assert found["target"] == {"start_offset": 0, "end_offset": SHIFT + COUNT}
    assert found["next_offset"] == 6
    rows = found["records"]
    assert [(r["source"]["offset"], r["target"]["offset"]) for r in rows] == [(i, i + SHIFT) for i in range(2, 6)]
    assert [(r["match"]["status"], r["match"]["target_offset"]) for r in rows] == [
        ("exact", i + SHIFT) for i in range(2, 6)
    ]
    for row, (key, value, headers, timestamp) in zip(rows, seeded.records[2:6], strict=True):
        for side in (row["source"], row["target"]):
            assert shown(side, "key") == key.decode()
            assert shown(side, "value") == json.dumps(json.loads(value), indent=2)
            assert side["value"] == {
                "size": len(value),
                "format": "json",
                "shown": shown(side, "value"),
                "truncated": False,
            }
            assert [h["name"] for h in side["headers"]] == ["trace", "bin"]
            assert side["headers"][0]["value"]["shown"] == headers[0][1].decode()
            assert side["headers"][1]["value"] == {
                "size": 3,
                "format": "hex",
                "shown": headers[1][1].hex(" "),
                "truncated": False,
            }
            assert (side["timestamp"], side["timestamp_type"]) == (timestamp, "CreateTime")

    [audit] = AuditRecord.objects.filter(action="flow.read_records")
    assert (audit.actor_username, audit.object_id) == ("operator-user", str(flow.pk))
    assert audit.after == {
        "topic": seeded.topic,
        "partition": 0,
        "remote_topic": seeded.remote,
        "records": 4,
        "source_offsets": [2, 5],
        "target_offsets": [5, 8],
    }
    assert "widget" not in json.dumps(audit.after)

    by_time = operator.get(
        url(flow),
        {"topic": seeded.topic, "partition": 0, "timestamp": seeded.records[6][3] - 500, "limit": 1, "render": "hex"},
    )
    assert by_time.status_code == 200, by_time.content
    [row] = by_time.json()["records"]
    assert (row["source"]["offset"], row["target"]["offset"]) == (6, 6 + SHIFT)
    assert shown(row["target"], "value") == seeded.records[6][1].hex(" ")

    find = operator.get(url(flow, "find/"), {"topic": seeded.topic, "partition": 0, "offset": 7})
    assert find.status_code == 200, find.content
    assert find.json() == {
        "topic": seeded.topic,
        "partition": 0,
        "offset": 7,
        "remote_topic": seeded.remote,
        "status": "exact",
        "target_offset": 7 + SHIFT,
        "target_range": None,
        "reason": "the offset syncs give its position; key, value and headers are the same",
    }

    # Written after replication stopped: no offset sync reaches them yet.
    produce(kafka_clusters["us-west"], seeded.topic, known_records(seeded.records[-1][3] + 1000)[:1])
    late = operator.get(url(flow, "find/"), {"topic": seeded.topic, "partition": 0, "offset": COUNT}).json()
    assert (late["status"], late["target_offset"]) == ("not_replicated", None)
    missing = operator.get(url(flow, "find/"), {"topic": seeded.topic, "partition": 0, "offset": COUNT + 5}).json()
    assert (missing["status"], missing["target_offset"]) == ("no_record", None)

    audited = AuditRecord.objects.filter(action="flow.read_records").count()
    assert audited == 2  # both of the operator's reads of contents; a find shows none
    viewed = api("viewer").get(url(flow), {**query, "limit": 1})
    assert viewed.status_code == 200, viewed.content
    [row] = viewed.json()["records"]
    key, value, headers, _ = seeded.records[2]
    for side in (row["source"], row["target"]):
        assert side["key"] == {"size": len(key), "format": None, "shown": None, "truncated": False}
        assert side["value"] == {"size": len(value), "format": None, "shown": None, "truncated": False}
        assert [(h["name"], h["value"]["shown"], h["value"]["size"]) for h in side["headers"]] == [
            ("trace", None, 3),
            ("bin", None, 3),
        ]
    assert "widget" not in viewed.content.decode() and "order-" not in viewed.content.decode()
    assert AuditRecord.objects.filter(action="flow.read_records").count() == audited  # no contents, no audit

    bad_partition = operator.get(url(flow), {"topic": seeded.topic, "partition": 3})
    assert bad_partition.status_code == 400
    assert bad_partition.json() == {"partition": [f"{seeded.topic!r} has partitions 0..0"]}


@pytest.mark.kafka
@pytest.mark.django_db
def test_mm2s_sparse_syncs_give_a_range_and_the_copy_is_found_in_it_by_its_bytes(
    api: Api, kafka_clusters: dict[str, str]
) -> None:
    first = SHIFT + 2  # the copy of source offset 0
    seeded = mm2_synced_flow(kafka_clusters, [(0, first), (8, first + 8)])
    response = api("viewer").get(url(seeded.flow), {"topic": seeded.topic, "partition": 0, "limit": COUNT})
    assert response.status_code == 200, response.content
    rows = response.json()["records"]
    found = [(r["source"]["offset"], r["match"]["status"], r["match"]["target_offset"]) for r in rows]
    assert found == [(i, "exact" if i in (0, 8) else "matched", first + i) for i in range(COUNT)]
    assert [r["match"]["target_range"] for r in rows][2:4] == [[first + 1, first + 7]] * 2
    assert rows[9]["match"]["target_range"] == [first + 9, first + 9]  # past the last sync: up to the end

    find = api("viewer").get(url(seeded.flow, "find/"), {"topic": seeded.topic, "partition": 0, "offset": 3}).json()
    assert (find["status"], find["target_offset"], find["target_range"]) == (
        "matched",
        first + 3,
        [first + 1, first + 7],
    )
    assert find["reason"].startswith("MirrorMaker 2's offset syncs are sparse: the copy is between downstream offsets")


@pytest.mark.django_db
def test_bad_input_is_a_400_naming_the_parameter(api: Api) -> None:
    west = Cluster.objects.create(alias="us-west", bootstrap_servers="127.0.0.1:1")
    east = Cluster.objects.create(alias="us-east", bootstrap_servers="127.0.0.1:2")
    flow = Flow.objects.create(source=west, target=east, topics=["orders"])
    client = api("operator")
    cases = [
        ({"topic": "orders", "partition": 0, "colour": "red"}, {"colour": ["Unknown field."]}),
        (
            {"topic": "orders", "partition": 0, "limit": 51},
            {"limit": ["Ensure this value is less than or equal to 50."]},
        ),
        ({"topic": "orders", "partition": -1}, {"partition": ["Ensure this value is greater than or equal to 0."]}),
        ({"topic": "orders", "partition": 0, "render": "xml"}, {"render": ['"xml" is not a valid choice.']}),
        (
            {"topic": "or ders", "partition": 0},
            {"topic": ["not a Kafka topic name (letters, digits, '.', '_' and '-')"]},
        ),
        (
            {"topic": "orders", "partition": 0, "offset": 1, "timestamp": 5},
            {"timestamp": ["give an offset or a timestamp, not both"]},
        ),
        (
            {"topic": "payments", "partition": 0},
            {"topic": ["'payments' is not replicated by this flow (its topic filter)"]},
        ),
    ]
    for params, error in cases:
        response = client.get(url(flow), params)
        assert (response.status_code, response.json()) == (400, error), params
    response = client.get(url(flow, "find/"), {"topic": "orders", "partition": 0})
    assert (response.status_code, response.json()) == (400, {"offset": ["This field is required."]})
    assert api("nobody").get(url(flow), {"topic": "orders", "partition": 0}).status_code == 403
