"""An unreachable cluster (a closed port on 127.0.0.1: every connection refused) costs an API request seconds, not
half a minute, and the 400 says what the broker said."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable

import pytest
from rest_framework.test import APIClient

from controlplane.clusters.models import Cluster
from controlplane.failover.choices import Check
from controlplane.failover.models import Failover
from controlplane.failover.services import context, preflight
from controlplane.flows.models import Flow

Api = Callable[[str | None], APIClient]
BOUND_SECONDS = 6.0


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # closed when the socket is: connections to it are refused


@pytest.fixture
def flow(closed_port: int) -> Flow:
    west = Cluster.objects.create(alias="us-west", bootstrap_servers=f"127.0.0.1:{closed_port}")
    east = Cluster.objects.create(alias="us-east", bootstrap_servers=f"127.0.0.1:{closed_port}")
    return Flow.objects.create(source=west, target=east)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "path",
    [
        "clusters/{target}/upstream-clusters/",
        "clusters/{target}/hops/?upstream=us-west",
        "clusters/{target}/remote-topics/",
        "clusters/{target}/browse/topics/",
        "clusters/{target}/browse/topics/orders/",
        "clusters/{target}/browse/groups/",
        "clusters/{target}/browse/groups/billing/",
        "clusters/{target}/browse/remote-topics/",
        "flows/{flow}/translated-offsets/?group=orders",
        "flows/{flow}/checkpoints/",
    ],
)
def test_a_read_of_an_unreachable_cluster_is_a_400_with_the_broker_error_within_seconds(
    api: Api, flow: Flow, closed_port: int, path: str
) -> None:
    client = api("viewer")
    started = time.monotonic()
    response = client.get("/api/v1/" + path.format(target=flow.target_id, flow=flow.pk))
    elapsed = time.monotonic() - started
    assert response.status_code == 400, response.content
    detail = response.json()["detail"]
    assert detail.startswith("us-") and f"127.0.0.1:{closed_port}" in detail and "Connection refused" in detail
    assert elapsed < BOUND_SECONDS, f"{path}: {elapsed:.1f} s"


def run_preflight(source: Cluster, target: Cluster) -> tuple[float, dict[str, preflight.Result]]:
    Flow.objects.get_or_create(source=source, target=target)
    failover = Failover(mode="planned", source=source, target=target, groups=["orders"])
    started = time.monotonic()
    results = preflight.run(failover, context.flows(failover))
    return time.monotonic() - started, {r.code: r for r in results}


@pytest.mark.django_db
def test_preflight_against_unreachable_clusters_fails_within_seconds_saying_why(flow: Flow, closed_port: int) -> None:
    elapsed, results = run_preflight(flow.source, flow.target)
    assert elapsed < 2 * BOUND_SECONDS
    for code in ("source_reachable", "heartbeats_fresh", "checkpoints_exist", "target_groups_empty"):
        assert results[code].status == Check.FAIL
        assert "Connection refused" in results[code].detail, results[code]


@pytest.mark.kafka
@pytest.mark.django_db
def test_preflight_with_the_source_up_and_the_target_unreachable_fails_within_seconds(
    kafka_clusters: dict[str, str], closed_port: int
) -> None:
    source = Cluster.objects.create(alias="us-west", bootstrap_servers=kafka_clusters["us-west"])
    target = Cluster.objects.create(alias="gone", bootstrap_servers=f"127.0.0.1:{closed_port}")
    elapsed, results = run_preflight(source, target)
    assert elapsed < BOUND_SECONDS
    assert results["source_reachable"].status == Check.PASS
    for code in ("heartbeats_fresh", "checkpoints_exist", "target_groups_empty", "acls_on_target"):
        assert results[code].status == Check.FAIL
        assert f"the target gone does not answer: 127.0.0.1:{closed_port}" in results[code].detail, results[code]
        assert "Connection refused" in results[code].detail
