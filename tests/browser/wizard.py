"""Driving the failover wizard in the browser, step by step, with a screenshot of each."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from playwright.sync_api import Page, expect

from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from controlplane.monitoring.services.health import health
from controlplane.orchestration.services.status import flow_status
from tests.browser.conftest import shoot
from tests.support.celery import Processes, start_celery
from tests.support.kafka import create_topic, unique_topic
from tests.support.replication import produce_known

STEP_TIMEOUT = 120_000


def jobs_env(celery_env: dict[str, str]) -> dict[str, str]:
    """The worker's environment, listening on the broker the live server enqueues each step's job on."""
    return {**celery_env, "CELERY_BROKER_URL": str(settings.CELERY_BROKER_URL)}


@dataclass(frozen=True)
class FailoverSetup:
    topic: str
    group: str
    clusters: dict[str, Cluster]
    flow: Flow


def failover_setup(
    name: str,
    kafka_clusters: dict[str, str],
    celery_env: dict[str, str],
    celery_processes: Processes,
    logs: Path,
    partitions: int,
    records: int = 0,
) -> FailoverSetup:
    """A topic on us-west (with `records` known records per partition, and no more), the us-west -> us-east
    failover flow, and a worker with beat on the live server's broker."""
    topic, group = unique_topic(name), unique_topic(f"{name}-group")
    create_topic(kafka_clusters["us-west"], topic, partitions=partitions)
    if records:
        produce_known(kafka_clusters["us-west"], topic, partitions, records)
    clusters = {a: Cluster.objects.create(alias=a, bootstrap_servers=kafka_clusters[a]) for a in ("us-west", "us-east")}
    flow = failover_flow(clusters["us-west"], clusters["us-east"], topic, f"{group}.*")
    start_celery(jobs_env(celery_env), celery_processes, logs, "w1", "beat", concurrency=4)
    return FailoverSetup(topic, group, clusters, flow)


def failover_flow(source: Cluster, target: Cluster, topic: str, groups: str) -> Flow:
    """A flow with short intervals, so checkpoints and heartbeats are fresh within seconds."""
    return Flow.objects.create(
        source=source,
        target=target,
        topics=[topic],
        groups=[groups],
        refresh_topics_interval_seconds=2,
        refresh_groups_interval_seconds=2,
        offset_flush_interval_ms=200,
        emit_checkpoints_interval_seconds=1,
        emit_heartbeats_interval_seconds=1,
    )


def healthy(flow: Flow) -> bool:
    return bool(health(flow_status(flow)) == "healthy")


def at_step(page: Page, step: str, timeout: int = STEP_TIMEOUT) -> None:
    expect(page.locator(f"#panel h2[data-current={step}]")).to_be_visible(timeout=timeout)


def plan(page: Page, base: str, group: str, source: str, target: str, mode: str, threshold: int = 0) -> None:
    page.goto(f"{base}/failover/")
    page.fill("#f-groups", group)
    page.select_option("#f-source", source)
    page.select_option("#f-target", target)
    page.check(f"input[name=mode][value={mode}]")
    page.fill("#f-drain_threshold", str(threshold))


def start(page: Page) -> None:
    page.get_by_role("button", name="Start the wizard").click()
    at_step(page, "preflight")


def preflight(page: Page, name: str) -> None:
    """Run the checks, screenshot them, acknowledge every warning and continue."""
    page.get_by_role("button", name="Run pre-flight checks").click()
    expect(page.locator(".pfcheck").first).to_be_visible(timeout=STEP_TIMEOUT)
    shoot(page, name)
    for box in page.locator("input[name=ack]").all():
        box.check()
    page.get_by_role("button", name="Continue").click()


def fence(page: Page, until: str = "checkpoint", attempts: int = 20) -> None:
    """Confirm and verify; while the source's end offsets still move, verify again. The button is disabled while
    the step's job is queued or running."""
    for _ in range(attempts):
        page.check("#fence-confirm")
        page.get_by_role("button", name="Verify the fence").click()
        expect(page.locator("#panel .jobstate")).to_have_count(0, timeout=STEP_TIMEOUT)
        # the step's own buttons (the demo's traffic switch in the panel stays enabled while the job runs)
        expect(page.locator("#panel .formactions button").first).to_be_enabled(timeout=STEP_TIMEOUT)
        if page.locator(f"#panel h2[data-current={until}]").count():
            return
        page.wait_for_timeout(2000)
    at_step(page, until, timeout=1000)


def checkpoint_to_apply(page: Page) -> None:
    page.get_by_role("button", name="Take the final checkpoint").click()
    at_step(page, "apply")


def apply_verify_failback(page: Page, target: str, prefix: str, set_up: bool = True) -> None:
    page.get_by_role("button", name=f"Write the offsets to {target}").click()
    at_step(page, "verify")
    shoot(page, f"{prefix}-6-apply")
    page.get_by_role("button", name="Read back the offsets").click()
    at_step(page, "failback")
    shoot(page, f"{prefix}-7-verify")
    page.get_by_role("button", name="Set up the flow back" if set_up else "Skip").click()
    at_step(page, "done")
    shoot(page, f"{prefix}-8-failback-done")
