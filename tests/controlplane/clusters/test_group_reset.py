"""A consumer group's offsets reset on real brokers: the preview's exact counts of records read again or skipped,
the apply moving the group exactly where the preview said, a group with a member or one that moved since the
preview refused with nothing written, the timestamp resolved to the exact offset, and the roles and the audit."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer
from rest_framework.test import APIClient

from controlplane.audit.models import AuditRecord
from controlplane.clusters.groupreset import RESET
from tests.support.groupreset import COMMITTED, RECORDS, Seeded, commit, committed, seed
from tests.support.kafka import admin, wait_until

Api = Callable[[str | None], APIClient]

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


@pytest.fixture
def seeded(kafka_clusters: dict[str, str]) -> Seeded:
    return seed(kafka_clusters)


@pytest.fixture
def member(seeded: Seeded) -> Iterator[Consumer]:
    consumer = Consumer({"bootstrap.servers": seeded.bootstrap, "group.id": seeded.group, "enable.auto.commit": False})
    consumer.subscribe([seeded.topic])
    wait_until(lambda: consumer.poll(0.2) is None and len(consumer.assignment()) == 3, what="the group's assignment")
    try:
        yield consumer
    finally:
        consumer.close()


def preview(client: APIClient, seeded: Seeded, **body: Any) -> dict[str, Any]:
    answer = client.post(seeded.url(), body, format="json")
    assert answer.status_code == 200, answer.content
    found: dict[str, Any] = answer.json()
    return found


def moves(found: dict[str, Any]) -> dict[int, tuple[int | None, int, int, int]]:
    """partition -> (current, new, reread, skipped)."""
    return {
        r["partition"]: (r["current_offset"], r["new_offset"], r["reread"], r["skipped"]) for r in found["partitions"]
    }


def test_the_preview_counts_records_read_again_and_skipped_and_the_apply_writes_exactly_that(
    api: Api, seeded: Seeded
) -> None:
    operator = api("operator")
    earliest = preview(operator, seeded, to="earliest", topic=seeded.topic)
    assert moves(earliest) == {0: (3, 0, 3, 0), 1: (5, 0, 5, 0), 2: (10, 0, 10, 0)}
    assert (earliest["reread"], earliest["skipped"], earliest["state"]) == (18, 0, "EMPTY")
    assert {(r["log_start"], r["log_end"]) for r in earliest["partitions"]} == {(0, RECORDS)}

    latest = preview(operator, seeded, to="latest")  # no topic: every partition the group committed
    assert moves(latest) == {0: (3, 10, 0, 7), 1: (5, 10, 0, 5), 2: (10, 10, 0, 0)}
    one = preview(operator, seeded, to="offset", offset=4, topic=seeded.topic, partition=1)
    assert moves(one) == {1: (5, 4, 1, 0)}

    body = {"to": "offset", "offset": 4, "topic": seeded.topic, "partition": 1, "preview": one["preview"]}
    applied = operator.post(seeded.url(preview=False), body, format="json")
    assert applied.status_code == 200, applied.content
    assert committed(seeded.bootstrap, seeded.group) == {0: 3, 1: 4, 2: 10}

    body = {"to": "earliest", "topic": seeded.topic, "preview": earliest["preview"]}
    stale = operator.post(seeded.url(preview=False), body, format="json")
    assert stale.status_code == 409, stale.content  # partition 1 is at 4 now, not the 5 that preview read
    assert "moved since the preview" in stale.json()["detail"]
    assert "-1 was 5, is now 4" in stale.json()["detail"]
    assert committed(seeded.bootstrap, seeded.group) == {0: 3, 1: 4, 2: 10}

    records = AuditRecord.objects.filter(action=RESET)
    assert [r.after for r in records] == [
        {
            "cluster": seeded.cluster.alias,
            "group": seeded.group,
            "to": "offset",
            "partitions": [{"topic": seeded.topic, "partition": 1, "old_offset": 5, "new_offset": 4}],
        }
    ]
    assert records[0].actor is not None and records[0].actor.username == "operator-user"


def test_a_group_that_moved_since_the_preview_is_refused_and_keeps_its_offsets(api: Api, seeded: Seeded) -> None:
    operator = api("operator")
    found = preview(operator, seeded, to="earliest", topic=seeded.topic)
    commit(seeded.bootstrap, seeded.group, seeded.topic, {2: 8})
    body = {"to": "earliest", "topic": seeded.topic, "preview": found["preview"]}
    refused = operator.post(seeded.url(preview=False), body, format="json")
    assert refused.status_code == 409, refused.content
    assert refused.json()["detail"].startswith("the group moved since the preview: ")
    assert committed(seeded.bootstrap, seeded.group) == {0: 3, 1: 5, 2: 8}
    assert not AuditRecord.objects.filter(action=RESET).exists()


def test_a_group_with_a_member_is_refused_in_preview_and_apply_and_nothing_changes(
    api: Api, seeded: Seeded, member: Consumer
) -> None:
    operator = api("operator")
    refused = operator.post(seeded.url(), {"to": "earliest"}, format="json")
    assert refused.status_code == 409, refused.content
    assert refused.json()["detail"].startswith(f"{seeded.group} has 1 member and is STABLE: ")
    assert "EMPTY" in refused.json()["detail"]
    member.close()
    wait_until(lambda: committed(seeded.bootstrap, seeded.group) and not _members(seeded), what="the group empty")
    found = preview(operator, seeded, to="earliest")
    rejoined = Consumer({"bootstrap.servers": seeded.bootstrap, "group.id": seeded.group, "enable.auto.commit": False})
    rejoined.subscribe([seeded.topic])
    try:
        wait_until(lambda: rejoined.poll(0.2) is None and len(rejoined.assignment()) == 3, what="a member again")
        body = {"to": "earliest", "preview": found["preview"]}
        applied = operator.post(seeded.url(preview=False), body, format="json")
        assert applied.status_code == 409, applied.content
        assert "has 1 member" in applied.json()["detail"]
    finally:
        rejoined.close()
    assert committed(seeded.bootstrap, seeded.group) == COMMITTED
    assert not AuditRecord.objects.filter(action=RESET).exists()


def _members(seeded: Seeded) -> int:
    client = admin(seeded.bootstrap)
    described = client.describe_consumer_groups([seeded.group], request_timeout=10)[seeded.group].result(timeout=15)
    return len(described.members)


def test_a_timestamp_resolves_to_the_first_record_at_or_after_it_or_the_end(api: Api, seeded: Seeded) -> None:
    viewer = api("viewer")
    at = preview(viewer, seeded, to="timestamp", timestamp="2023-11-14T22:13:24.500Z", topic=seeded.topic)
    # BASE_MS is 2023-11-14T22:13:20Z: record 5 is the first at or after 24.5 s (25 s).
    assert {r["new_offset"] for r in at["partitions"]} == {5}
    assert moves(at)[0] == (3, 5, 0, 2)
    late = preview(viewer, seeded, to="timestamp", timestamp="2023-11-14T23:13:20", topic=seeded.topic)
    assert {r["new_offset"] for r in late["partitions"]} == {RECORDS}


def test_a_viewer_previews_but_may_not_apply(api: Api, seeded: Seeded) -> None:
    found = preview(api("viewer"), seeded, to="earliest")
    refused = api("viewer").post(seeded.url(preview=False), {"to": "earliest", "preview": found["preview"]})
    assert refused.status_code == 403, refused.content
    assert api(None).post(seeded.url(), {"to": "earliest"}, format="json").status_code in (401, 403)
    assert committed(seeded.bootstrap, seeded.group) == COMMITTED


def test_bad_input_is_a_400_naming_the_field(api: Api, seeded: Seeded) -> None:
    operator = api("operator")
    cases: list[tuple[dict[str, Any], str]] = [
        ({"to": "earliest", "topics": "x"}, "topics"),
        ({"to": "sideways"}, "to"),
        ({"to": "offset"}, "offset"),
        ({"to": "earliest", "offset": 3}, "offset"),
        ({"to": "timestamp", "timestamp": "yesterday"}, "timestamp"),
        ({"to": "earliest", "partition": 0}, "partition"),
        ({"to": "earliest", "topic": seeded.topic, "partition": 3}, "partition"),
        ({"to": "earliest", "topic": "no-such-topic"}, "topic"),
        ({"to": "offset", "offset": RECORDS + 1, "topic": seeded.topic}, "offset"),
    ]
    for body, field in cases:
        answer = operator.post(seeded.url(), body, format="json")
        assert answer.status_code == 400, (body, answer.content)
        assert list(answer.json()) == [field], (body, answer.json())
    found = preview(operator, seeded, to="earliest")
    other = operator.post(seeded.url(preview=False), {"to": "latest", "preview": found["preview"]}, format="json")
    assert other.status_code == 400 and list(other.json()) == ["preview"], other.content
    forged = operator.post(seeded.url(preview=False), {"to": "earliest", "preview": "x" + found["preview"]})
    assert forged.status_code == 400 and list(forged.json()) == ["preview"], forged.content
    assert committed(seeded.bootstrap, seeded.group) == COMMITTED
