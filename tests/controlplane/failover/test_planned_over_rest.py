"""A planned failover walked entirely over /api/v1/failovers/ with a real worker: the group resumes on the target
with 0 records re-read and 0 skipped, checked record by record; the flow back is set up."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from rest_framework.test import APIClient

from controlplane.audit.models import AuditRecord
from controlplane.clusters.models import Cluster
from controlplane.failover.api.serializers import StepsSerializer
from controlplane.failover.models import Failover
from controlplane.flows.models import Flow
from tests.browser.traffic import Traffic
from tests.support.celery import Processes, start_celery
from tests.support.documented import assert_documented
from tests.support.failover import committed, consume_and_commit, exactness, group_member, read_rest, values_from
from tests.support.kafka import create_topic, unique_topic, wait_until

pytestmark = [pytest.mark.kafka, pytest.mark.compat, pytest.mark.django_db(transaction=True)]
PARTITIONS = 2


def make_flow(clusters: dict[str, str], topic: str, groups: str) -> Flow:
    west, east = (Cluster.objects.create(alias=a, bootstrap_servers=clusters[a]) for a in ("us-west", "us-east"))
    return Flow.objects.create(
        source=west,
        target=east,
        topics=[topic],
        groups=[groups],
        refresh_topics_interval_seconds=2,
        refresh_groups_interval_seconds=2,
        offset_flush_interval_ms=200,
        emit_checkpoints_interval_seconds=1,
        emit_heartbeats_interval_seconds=1,
    )


def step(client: APIClient, pk: int, name: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    """Start the step (202: its job is queued), then poll the failover until the job has finished."""
    response = client.post(f"/api/v1/failovers/{pk}/{name}/", body or {}, format="json")
    assert response.status_code == 202, response.content

    def finished() -> dict[str, Any] | None:
        data: dict[str, Any] = client.get(f"/api/v1/failovers/{pk}/").json()
        return data if data["job"]["state"] in ("succeeded", "failed") else None

    done = wait_until(finished, timeout=120, interval=0.3, what=f"the {name} job")
    assert done["job"]["state"] == "succeeded", done["job"]
    return done


def until_step(client: APIClient, pk: int, name: str, want: str, body: dict[str, Any] | None = None) -> None:
    def advanced() -> bool:
        return str(step(client, pk, name, body)["step"]) == want

    wait_until(advanced, timeout=120, interval=1, what=f"{name} to complete")


def fence_while_a_member_stays(client: APIClient, pk: int, west: str, group: str, topic: str, protocol: str) -> None:
    """The fence sees a member of the group (of either protocol) and fails naming it; the member's client id is
    Mirrorplane's to check, set here."""
    member = group_member(west, group, protocol=protocol)
    member.subscribe([topic])
    try:
        wait_until(lambda: member.poll(0.2) is not None or bool(member.assignment()), timeout=60, what="a member")
        done = step(client, pk, "fence", {"confirmed": True})
        assert done["step"] == "fence"
        checks = {c["code"]: c for c in done["steps"]["fence"]["result"]["checks"]}
        assert checks["members_gone"]["status"] == "fail"
        assert "still consuming" in checks["members_gone"]["detail"], checks
    finally:
        member.close()


@pytest.mark.parametrize("protocol", ["classic", "consumer"])
def test_a_planned_failover_moves_a_mid_stream_group_with_nothing_reread_or_skipped(
    kafka_clusters: dict[str, str],
    kafka_versions: dict[str, str],
    celery_env: dict[str, str],
    celery_processes: Processes,
    tmp_path: Path,
    api: Callable[[str | None], APIClient],
    protocol: str,
) -> None:
    """The group reads with the classic protocol, or with KIP-848's consumer protocol, which only Kafka 4 brokers
    (and 3.7+ with it enabled) speak: on 2.3.0 that case is skipped."""
    if protocol == "consumer" and kafka_versions["us-west"].startswith(("2.", "3.")):
        pytest.skip(
            f"KIP-848's consumer group protocol needs a Kafka 4 source; us-west runs {kafka_versions['us-west']}"
        )
    topic, group = unique_topic("fo"), unique_topic("fo-group")
    west, east = kafka_clusters["us-west"], kafka_clusters["us-east"]
    create_topic(west, topic, partitions=PARTITIONS)
    make_flow(kafka_clusters, topic, f"{group}.*")
    # The API enqueues each step's job on the run's broker: the worker must listen there.
    env = {**celery_env, "CELERY_BROKER_URL": str(settings.CELERY_BROKER_URL)}
    start_celery(env, celery_processes, tmp_path, "w1", "beat", concurrency=4)
    client = api("operator")

    with Traffic(west, topic, PARTITIONS, rate=300) as traffic:
        wait_until(lambda: traffic.sent > 1500, timeout=30, what="records produced")
        already = consume_and_commit(west, group, topic, 1000, protocol=protocol)  # mid-stream: producers still write
        body = {"mode": "planned", "source": "us-west", "target": "us-east", "groups": [group], "drain_threshold": 2000}
        created = client.post("/api/v1/failovers/", body, format="json")
        assert created.status_code == 201, created.content
        pk = created.json()["id"]
        acknowledged = {"acknowledge": ["flow_healthy", "checkpoints_exist"], "proceed": True}
        until_step(client, pk, "preflight", "drain", acknowledged)
        until_step(client, pk, "drain", "fence")
    positions = committed(west, group, topic, PARTITIONS)
    fence_while_a_member_stays(client, pk, west, group, topic, protocol)
    until_step(client, pk, "fence", "checkpoint", {"confirmed": True})
    until_step(client, pk, "checkpoint", "apply")
    assert step(client, pk, "apply")["step"] == "verify"
    assert step(client, pk, "verify")["step"] == "failback"
    done = step(client, pk, "failback", {"set_up": True})
    assert done["status"] == "completed"
    assert done["steps"] == Failover.objects.get(pk=pk).steps, "the API serves each step as it was stored"
    assert_documented(done["steps"], StepsSerializer())
    assert Flow.objects.filter(source__alias="us-east", target__alias="us-west").exists()
    assert {r.action for r in AuditRecord.objects.filter(object_type="failover.failover")} >= {
        "failover.plan",
        "failover.preflight",
        "failover.fence",
        "failover.checkpoint",
        "failover.apply",
        "failover.verify",
        "failover.failback",
    }

    preview = done["steps"]["checkpoint"]["result"]["preview"]
    assert all(row["method"] == "sync" and row["exact"] for row in preview), preview
    rest = values_from(west, topic, positions)
    on_target = read_rest(east, group, f"us-west.{topic}", PARTITIONS)
    result = exactness(already, rest, on_target)
    assert (result.reread, result.skipped) == (0, 0)
    assert result.in_order and result.expected > 0
