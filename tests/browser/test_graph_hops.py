"""The graph's dotted hop edges: on a chain west -> east -> backup of real flows, backup hears west's heartbeats
two hops away, and the dashboard draws that path as an edge west -> backup labelled "2 hops (heartbeats)"."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from tests.browser.conftest import log_in, make_user, shoot
from tests.support.celery import Processes, start_celery
from tests.support.kafka import wait_until

pytestmark = [pytest.mark.kafka, pytest.mark.django_db(transaction=True)]


def graph_data(page: Page, attribute: str) -> list[dict[str, Any]]:
    raw = page.locator("#graph").get_attribute(attribute)
    return json.loads(raw) if raw else []


def test_a_two_hop_chain_shows_a_dotted_hop_edge_seen_in_heartbeats(
    page: Page,
    live_server: LiveServer,
    kafka_clusters: dict[str, str],
    celery_env: dict[str, str],
    celery_processes: Processes,
    tmp_path: Path,
) -> None:
    # Aliases of their own: heartbeat topics other tests left in the shared clusters (us-east.us-west.heartbeats
    # in backup) name other aliases, so only this chain can make the hop edge appear.
    run = uuid.uuid4().hex[:4]
    west, east, backup = (f"{a}-{run}" for a in ("us-west", "us-east", "backup"))
    clusters = {
        alias: Cluster.objects.create(alias=alias, bootstrap_servers=kafka_clusters[real])
        for alias, real in ((west, "us-west"), (east, "us-east"), (backup, "backup"))
    }
    nothing = f"none-{uuid.uuid4().hex}"  # only heartbeats flow: the topic filter always lets them through
    for source, target in ((west, east), (east, backup)):
        Flow.objects.create(
            source=clusters[source],
            target=clusters[target],
            topics=[nothing],
            emit_heartbeats_interval_seconds=1,
            refresh_topics_interval_seconds=2,
            offset_flush_interval_ms=200,
            emit_checkpoints_enabled=False,
        )
    env = {**celery_env, "MIRRORPLANE_SAMPLE_INTERVAL_SECONDS": "2", "MIRRORPLANE_OBSERVE_INTERVAL_SECONDS": "2"}
    start_celery(env, celery_processes, tmp_path, "w1", "beat", concurrency=4)
    make_user("vera", "viewer")
    log_in(page, live_server.url, "vera")

    hop = {"source": west, "target": backup, "hops": 2}
    wait_until(
        lambda: hop in graph_data(page, "data-hops"),
        timeout=60,
        interval=1,
        what=f"a hop edge {west} -> {backup} on the graph",
    )
    ours = [h for h in graph_data(page, "data-hops") if {h["source"], h["target"]} <= set(clusters)]
    assert ours == [hop], "pairs joined by a flow get no hop edge"
    assert {e["name"] for e in graph_data(page, "data-edges")} == {f"{west}->{east}", f"{east}->{backup}"}
    expect(page.locator("#graph g.annotation").filter(has_text="2 hops (heartbeats)")).to_be_visible()
    shoot(page, "dashboard-hops")
