"""The broker health a viewer reads on the cluster page and on the dashboard, each figure matching what the brokers
say: brokers in the metadata, DescribeCluster's controller, and the partitions under their topic's
min.insync.replicas (a topic created with 3 on a one-broker cluster); a cluster not observed yet says "no data"."""

from __future__ import annotations

import pytest
from confluent_kafka.admin import ConfigResource
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from controlplane.clusters.models import Cluster
from controlplane.monitoring import tasks
from tests.browser.conftest import log_in, make_user, shoot
from tests.support.kafka import admin, create_topic, unique_topic, wait_until

pytestmark = [pytest.mark.kafka, pytest.mark.django_db(transaction=True)]


def brokers_say(bootstrap: str) -> dict[str, str]:
    """The figures computed here from the brokers' own answers (metadata, DescribeCluster, DescribeConfigs)."""
    client = admin(bootstrap)
    metadata = client.list_topics(timeout=10)
    controller = client.describe_cluster(request_timeout=10).result().controller.id
    resources = [ConfigResource(ConfigResource.Type.TOPIC, t) for t in metadata.topics]
    min_isr = {
        r.name: int(f.result()["min.insync.replicas"].value)
        for r, f in client.describe_configs(resources, request_timeout=10).items()
    }
    partitions = [(t, p) for t, meta in metadata.topics.items() for p in meta.partitions.values()]
    under_min_isr = sorted((t, p.id) for t, p in partitions if p.leader < 0 or len(p.isrs) < min_isr[t])
    return {
        "examples": ", ".join(f"{t}-{p}" for t, p in under_min_isr[:3]),
        "brokers_up": str(len(metadata.brokers)),
        "controller_id": str(controller),
        "under_replicated": str(sum(len(p.isrs) < len(p.replicas) for _, p in partitions)),
        "offline": str(sum(p.leader < 0 for _, p in partitions)),
        "under_min_isr": str(len(under_min_isr)),
    }


def test_a_viewer_reads_broker_health_on_the_cluster_page_and_the_dashboard(
    page: Page, live_server: LiveServer, kafka_clusters: dict[str, str]
) -> None:
    bootstrap = kafka_clusters["us-west"]
    topic = unique_topic("min-isr")
    create_topic(bootstrap, topic, partitions=2, config={"min.insync.replicas": "3"})
    wait_until(lambda: topic in admin(bootstrap).list_topics(timeout=10).topics, what=f"{topic} listed")
    west = Cluster.objects.create(alias="us-west", bootstrap_servers=bootstrap)
    tasks.observe()
    expected = brokers_say(bootstrap)
    examples = expected.pop("examples")
    assert int(expected["under_min_isr"]) >= 2  # the topic's two partitions at least
    unseen = Cluster.objects.create(alias="unseen", bootstrap_servers="127.0.0.1:1")
    make_user("vera", "viewer")
    log_in(page, live_server.url, "vera")

    page.goto(f"{live_server.url}/clusters/{west.pk}/")
    panel = page.locator("#broker-health")
    expect(panel.get_by_role("heading", name="Broker health")).to_be_visible()
    for key, value in expected.items():
        expect(panel.locator(f'[data-figure="{key}"] .value')).to_have_text(value)
    expect(panel.locator('[data-figure="under_min_isr"] .label')).to_have_text("Under min ISR")
    expect(panel.locator('[data-figure="under_min_isr"] .sub')).to_have_text(examples)
    shoot(page, "broker-health-cluster")

    page.goto(f"{live_server.url}/")
    line = page.locator('#broker-health tr[data-cluster="us-west"]')
    for key, value in expected.items():
        expect(line.locator(f'[data-figure="{key}"]')).to_have_text(value)
    headers = page.locator("#broker-health thead th").all_text_contents()
    assert [h.strip() for h in headers[1:6]] == [
        "Brokers up",
        "Controller",
        "Under-replicated",
        "Offline",
        "Under min ISR",
    ]
    page.locator("#broker-health").scroll_into_view_if_needed()
    none = page.locator(f'#broker-health tr[data-cluster="{unseen.alias}"]')
    expect(none.locator('[data-figure="under_replicated"]')).to_have_text("no data")
    expect(none).to_contain_text("no data: not observed yet")
    shoot(page, "broker-health-dashboard")
