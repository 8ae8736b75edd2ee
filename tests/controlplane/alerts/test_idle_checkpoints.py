"""An idle consumer group is not an alarm: checkpoints are written only when a group's offsets move, so a group
that committed nothing since its newest checkpoint has an old checkpoint that is still current. The observer tells
it from the source's committed offsets (real brokers), and the dashboard's oldest-checkpoint tile counts it as
idle instead of showing its age."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from controlplane.monitoring.services.graph import oldest_checkpoint
from controlplane.monitoring.services.observe import observe_flow
from replication.mm2.records import Checkpoint
from tests.support.failover import committed, consume_and_commit
from tests.support.kafka import create_topic, unique_topic
from tests.support.replication import produce_known

pytestmark = [pytest.mark.kafka, pytest.mark.django_db]


def test_a_group_that_committed_nothing_since_its_checkpoint_is_idle_not_stale(
    kafka_clusters: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    west = kafka_clusters["us-west"]
    topic = unique_topic("idle-cp")
    create_topic(west, topic, partitions=1)
    produce_known(west, topic, 1, 20)
    idle, busy = f"{topic}-idle", f"{topic}-busy"
    consume_and_commit(west, idle, topic, 10)
    consume_and_commit(west, busy, topic, 5)
    assert committed(west, idle, topic, 1) == {0: 10} and committed(west, busy, topic, 1) == {0: 5}
    source = Cluster.objects.create(alias="us-west", bootstrap_servers=west)
    target = Cluster.objects.create(alias="us-east", bootstrap_servers=kafka_clusters["us-east"])
    flow = Flow.objects.create(source=source, target=target, topics=[topic])
    now = timezone.now()
    old = int((time.time() - 21 * 60) * 1000)  # both groups' newest checkpoints are 21 minutes old
    remote = f"us-west.{topic}"
    latest = {
        idle: {(remote, 0): Checkpoint(idle, remote, 0, 10, 10, timestamp=old)},  # still where the group is
        busy: {(remote, 0): Checkpoint(busy, remote, 0, 3, 3, timestamp=old + 1000)},  # the group moved on to 5
    }
    monkeypatch.setattr("controlplane.monitoring.services.readers.latest_checkpoints", lambda *_: latest)

    observation = observe_flow(flow, now)
    assert {g: c["idle"] for g, c in observation.checkpoints.items()} == {idle: True, busy: False}
    tile = oldest_checkpoint([flow], now)
    assert tile is not None and (tile["group"], tile["idle_groups"]) == (busy, 1)
    assert tile["age_seconds"] == pytest.approx(21 * 60 - 1, abs=5)

    consume_and_commit(west, busy, topic, 15)  # busy read to the end; its checkpoint catches up: idle too
    latest[busy] = {(remote, 0): Checkpoint(busy, remote, 0, 20, 20, timestamp=old + 1000)}
    observe_flow(flow, now + timedelta(seconds=5))
    assert oldest_checkpoint([flow], now) == {
        "flow": None,
        "group": None,
        "timestamp": None,
        "age_seconds": None,
        "idle_groups": 2,
    }
