"""The drain on real brokers measures the partitions the failover's groups read, not the whole flow: a group that
reads a quiet topic drains to 0 while a producer keeps writing another topic of the same flow."""

from __future__ import annotations

from pathlib import Path

import pytest

from controlplane.failover.models import Failover
from controlplane.failover.results import DrainResult, StepEntry
from controlplane.failover.services import drain
from controlplane.orchestration.services.status import reported_partitions
from tests.browser.traffic import Traffic
from tests.browser.wizard import failover_setup
from tests.support.celery import Processes
from tests.support.failover import consume_and_commit
from tests.support.kafka import create_topic, unique_topic, wait_until

pytestmark = [pytest.mark.kafka, pytest.mark.django_db(transaction=True)]
PARTITIONS = 2
RECORDS = 50  # per partition of the quiet topic


def poll(failover: Failover) -> tuple[DrainResult, bool]:
    """One drain check, stored as the wizard's job stores it (the next check reads its trend)."""
    result, complete = drain.drain_step(failover, {})
    failover.steps = {**failover.steps, "drain": StepEntry(result, complete=complete).as_json()}
    return result, complete


def test_a_drain_to_zero_completes_for_a_quiet_topic_while_another_topic_of_the_flow_is_written(
    kafka_clusters: dict[str, str], celery_env: dict[str, str], celery_processes: Processes, tmp_path: Path
) -> None:
    west = kafka_clusters["us-west"]
    busy = unique_topic("drain-busy")
    create_topic(west, busy, partitions=PARTITIONS)
    # The quiet topic: RECORDS per partition, all read and committed by the group, then nothing more.
    setup = failover_setup(
        "drain-quiet", kafka_clusters, celery_env, celery_processes, tmp_path, PARTITIONS, RECORDS * PARTITIONS
    )
    quiet, group, flow = setup.topic, setup.group, setup.flow
    flow.topics = [quiet, busy]
    flow.save()
    consume_and_commit(west, group, quiet, RECORDS * PARTITIONS)
    failover = Failover.objects.create(
        mode="planned", source=setup.clusters["us-west"], target=setup.clusters["us-east"], groups=[group]
    )
    wanted = {(quiet, p) for p in range(PARTITIONS)} | {(busy, p) for p in range(PARTITIONS)}

    with Traffic(west, busy, PARTITIONS, rate=300) as traffic:
        wait_until(lambda: wanted <= reported_partitions(flow.pk), timeout=120, what="both topics replicated")
        sent_before = traffic.sent

        def drained() -> DrainResult | None:
            result, complete = poll(failover)
            return result if complete else None

        result = wait_until(drained, timeout=120, interval=2, what="the drain of the quiet topic")
        assert traffic.sent > sent_before + 300, "the busy topic was written throughout the drain"

    assert [(p.topic, p.partition) for p in result.partitions] == [(quiet, p) for p in range(PARTITIONS)]
    assert [p.source_end for p in result.partitions] == [RECORDS] * PARTITIONS
    assert [p.lag for p in result.partitions] == [0] * PARTITIONS
    assert (result.lag, result.trend[-1].source_end, result.source_write_rate) == (0, RECORDS * PARTITIONS, 0.0)
    assert not result.producers_writing and result.why is None
