"""Acceptance 3 (unplanned): the source broker is killed mid-stream; the wizard moves the group to the target from
its last checkpoint and reports the RPO. The source comes back, and a failback returns the group to it exactly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from controlplane.flows.services import cluster_config
from controlplane.monitoring.services import readers
from localkafka import LocalKafka
from tests.browser.conftest import log_in, make_user, shoot
from tests.browser.traffic import Traffic
from tests.browser.wizard import (
    apply_verify_failback,
    at_step,
    checkpoint_to_apply,
    failover_flow,
    fence,
    healthy,
    jobs_env,
    plan,
    preflight,
    start,
)
from tests.support import workers
from tests.support.celery import Processes, start_celery
from tests.support.failover import Values, consume_and_commit, read_rest
from tests.support.kafka import consume_to_end, create_topic, unique_topic, wait_until

pytestmark = [pytest.mark.kafka, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
PARTITIONS = 2
DR = "dr-west"  # the local cluster
# The source's alias in Mirrorplane, new every run: the target keeps positions per flow name, and a brand-new
# cluster under an old name would rightly look like a recreated source (data loss) to the flow.
ALIAS = f"dr-{uuid.uuid4().hex[:6]}"


@pytest.fixture(scope="module")
def dr_kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalKafka]:
    """A source cluster of this test's own: killing its broker must not disturb the shared clusters.

    Started and stopped by the CLI in a small process: right after a fork from this large test process, the
    child's /proc cmdline is still Python's, and LocalKafka would take the JVM for one that exited."""
    base = workers.port(int(os.environ.get("MIRRORPLANE_DR_PORT_BASE", "25092")))
    state = Path(tmp_path_factory.mktemp("drkafka"))
    cli = [
        sys.executable,
        "-m",
        "localkafka",
        "--state-dir",
        str(state),
        "--port-base",
        str(base),
        "--zk-port-base",
        str(base - 7000),
    ]
    try:
        kafka = LocalKafka(state, broker_port_base=base, zk_port_base=base - 7000)
        # On a busy machine LocalKafka can read a just-started JVM's /proc cmdline before it is there, and take
        # it for one that exited; restart_broker retries past that (on 2.3.0 the ZooKeeper it started keeps
        # running).
        if subprocess.run([*cli, "up", "--clusters", DR], timeout=180, stdout=subprocess.DEVNULL).returncode != 0:
            kafka.restart_broker(DR, timeout=180)
        yield kafka
    finally:
        subprocess.run([*cli, "down", "--purge"], check=False, timeout=180, stdout=subprocess.DEVNULL)


def checkpointed(target: Cluster, group: str, committed: int) -> bool:
    latest = readers.latest_checkpoints(cluster_config(target), ALIAS).get(group, {})
    return sum(cp.upstream_offset for cp in latest.values()) >= committed


def fresh_heartbeat(cluster: Cluster, topic: str) -> bool:
    try:
        return readers.newest_heartbeat(cluster_config(cluster), topic) is not None
    except Exception:  # the cluster is still coming back
        return False


def by_partition(bootstrap: str, topic: str) -> Values:
    values: Values = {p: [] for p in range(PARTITIONS)}
    for msg in sorted(consume_to_end(bootstrap, topic, PARTITIONS), key=lambda m: (m.partition(), m.offset())):
        values[msg.partition() or 0].append(msg.value() or b"")
    return values


def unread(everything: Values, read: list[Values]) -> Values:
    """Per partition, the records of ``everything`` that none of ``read`` contains, in order."""
    return {p: [v for v in values if not any(v in r.get(p, []) for r in read)] for p, values in everything.items()}


def test_an_unplanned_failover_reports_its_rpo_and_then_fails_back_exactly(
    page: Page,
    live_server: LiveServer,
    kafka_clusters: dict[str, str],
    dr_kafka: LocalKafka,
    celery_env: dict[str, str],
    celery_processes: Processes,
    tmp_path: Path,
) -> None:
    dr_kafka.restart_broker(DR)
    west, east = dr_kafka.bootstraps()[DR], kafka_clusters["us-east"]
    topic, group = unique_topic("dr"), unique_topic("dr-group")
    create_topic(west, topic, partitions=PARTITIONS)
    source = Cluster.objects.create(alias=ALIAS, bootstrap_servers=west)
    target = Cluster.objects.create(alias="us-east", bootstrap_servers=east)
    forward = failover_flow(source, target, topic, f"{group}.*")
    start_celery(jobs_env(celery_env), celery_processes, tmp_path, "w1", "beat", concurrency=5)
    make_user("olga", "operator")
    log_in(page, live_server.url, "olga")
    remote = f"{ALIAS}.{topic}"

    traffic = Traffic(west, topic, PARTITIONS, rate=300).__enter__()
    try:
        wait_until(lambda: traffic.sent > 1500 and healthy(forward), timeout=120, what="records and a healthy flow")
        on_west = consume_and_commit(west, group, topic, 1000)
        wait_until(lambda: checkpointed(target, group, 1000), timeout=60, what="a checkpoint of the group's commit")
        os.kill(dr_kafka.broker_pid(DR), signal.SIGKILL)  # the outage, while the producer is still writing
    finally:
        traffic.stop(flush_seconds=2)

    plan(page, live_server.url, group, ALIAS, "us-east", "unplanned")
    start(page)
    preflight(page, "unplanned-2-preflight")
    at_step(page, "fence")
    fence(page)
    checkpoint_to_apply(page)
    expect(page.locator("#rpo")).to_contain_text("records")
    shoot(page, "unplanned-5-checkpoint-preview")
    apply_verify_failback(page, "us-east", "unplanned")
    expect(page.locator("#rpo")).to_contain_text("records")
    assert Flow.objects.filter(source=target, target=source).exists()

    # On the target the group resumes at its checkpoint: every replicated record it had not read, none it had.
    replicated = by_partition(east, remote)
    on_east = read_rest(east, group, remote, PARTITIONS)
    assert on_east == unread(replicated, [on_west]), "re-read or skipped records on the target"

    # The source comes back; the group has moved on in us-east, then fails back.
    dr_kafka.restart_broker(DR)
    reverse = Flow.objects.get(source=target, target=source)
    wait_until(lambda: healthy(forward) and healthy(reverse), timeout=180, interval=1, what="both flows healthy")
    # The reverse flow's first heartbeats create us-east's `heartbeats`, which it then replicates: until one
    # arrives, the failback's pre-flight rightly fails its heartbeat check. An operator waits for it; so do we.
    wait_until(lambda: fresh_heartbeat(source, "us-east.heartbeats"), timeout=60, interval=1, what="a heartbeat back")
    moved_on = consume_and_commit(east, group, remote, 200)
    plan(page, live_server.url, group, "us-east", ALIAS, "failback")
    start(page)
    preflight(page, "failback-2-preflight")
    at_step(page, "fence")
    fence(page)
    checkpoint_to_apply(page)
    expect(page.locator("#totals")).to_have_text("0 / 0")
    shoot(page, "failback-5-checkpoint-preview")
    apply_verify_failback(page, ALIAS, "failback")

    everything = by_partition(west, topic)
    back_on_west = read_rest(west, group, topic, PARTITIONS)
    assert back_on_west == unread(everything, [on_west, moved_on]), "re-read or skipped records after the failback"
    assert sum(map(len, back_on_west.values())) > 0
