"""Resuming the demo's traffic after its group was failed over away: refused until the generator's cluster is named,
the state says where the group went, and a failback (or a dry run) clears it."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest
from rest_framework.test import APIClient

from controlplane.audit.models import AuditRecord
from controlplane.clusters.models import Cluster
from controlplane.demo.services import traffic as demo_traffic
from controlplane.failover.models import Failover

Api = Callable[[str | None], APIClient]
URL = "/api/v1/demo/traffic/"
pytestmark = pytest.mark.django_db


@pytest.fixture
def clusters() -> dict[str, Cluster]:
    return {
        a: Cluster.objects.create(alias=a, bootstrap_servers=f"127.0.0.1:{n}")
        for n, a in ((1, "us-west"), (2, "us-east"))
    }


def paused_generator() -> None:
    status = {"pid": os.getpid(), "rate": 20.0, "topics": ["orders"], "paused": True, "group": "billing"}
    demo_traffic.control().publish(status)
    demo_traffic.control().request(True)


def moved(source: Cluster, target: Cluster, *, dry_run: bool = False, status: str = "completed") -> Failover:
    return Failover.objects.create(
        mode="planned", source=source, target=target, groups=["billing"], status=status, dry_run=dry_run
    )


def test_a_resume_after_the_group_moved_is_refused_naming_both_clusters(api: Api, clusters: dict[str, Cluster]) -> None:
    paused_generator()
    failover = moved(clusters["us-west"], clusters["us-east"])
    state = api("viewer").get(URL).json()
    assert (state["cluster"], state["moved"]) == (
        "us-west",
        {"group": "billing", "to": "us-east", "failover": failover.pk},
    )

    refused = api("operator").post(URL, {"paused": False}, format="json")
    assert refused.status_code == 409
    detail = refused.json()["detail"]
    assert (
        "billing was failed over to us-east" in detail
        and "restarts the demo's producers and billing on us-west" in detail
    )
    assert demo_traffic.control().requested_paused() is True, "nothing was resumed"
    assert not AuditRecord.objects.filter(action="demo.traffic.resume").exists()

    wrong = api("operator").post(URL, {"paused": False, "confirm_cluster": "us-east"}, format="json")
    assert wrong.status_code == 409 and demo_traffic.control().requested_paused() is True
    confirmed = api("operator").post(URL, {"paused": False, "confirm_cluster": "us-west"}, format="json")
    assert confirmed.status_code == 200 and demo_traffic.control().requested_paused() is False
    assert AuditRecord.objects.filter(action="demo.traffic.resume").count() == 1


def test_pausing_needs_no_confirmation(api: Api, clusters: dict[str, Cluster]) -> None:
    paused_generator()
    moved(clusters["us-west"], clusters["us-east"])
    assert api("operator").post(URL, {"paused": True}, format="json").status_code == 200


@pytest.mark.parametrize(
    "how", ["never moved", "dry run", "still in progress", "failed back"], ids=lambda how: how.replace(" ", "-")
)
def test_the_resume_needs_no_confirmation_while_the_group_reads_on_the_generators_cluster(
    api: Api, clusters: dict[str, Cluster], how: str
) -> None:
    paused_generator()
    west, east = clusters["us-west"], clusters["us-east"]
    if how == "dry run":
        moved(west, east, dry_run=True)
    elif how == "still in progress":
        moved(west, east, status="active")
    elif how == "failed back":
        moved(west, east)
        moved(east, west)
    assert api("viewer").get(URL).json()["moved"] is None
    assert api("operator").post(URL, {"paused": False}, format="json").status_code == 200
    assert demo_traffic.control().requested_paused() is False
