"""The observer reads Kafka for seconds outside any transaction; a cluster or flow deleted meanwhile must not make
the sampler's task fail with a foreign-key error (the live fuzz test's demo logged one on Postgres)."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone

from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from controlplane.monitoring.models import ClusterObservation, FlowObservation
from controlplane.monitoring.services import observe

# The foreign key is checked at commit, so the test needs real commits.
pytestmark = pytest.mark.django_db(transaction=True)


def test_a_cluster_deleted_while_it_is_observed_leaves_no_observation_and_no_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kept = Cluster.objects.create(alias="us-west", bootstrap_servers="127.0.0.1:1")
    doomed = Cluster.objects.create(alias="backup", bootstrap_servers="127.0.0.1:2")

    def check(cluster: Cluster) -> tuple[dict[str, Any], set[str]]:
        if cluster.pk == doomed.pk:
            Cluster.objects.filter(pk=doomed.pk).delete()  # another request deletes it during the read
        return {"ok": False, "error": "no broker answered"}, set()

    monkeypatch.setattr(observe, "listing", check)
    assert observe.observe_all(timezone.now()) == 0
    assert list(ClusterObservation.objects.values_list("cluster_id", "reachable")) == [(kept.pk, False)]


def test_a_flow_deleted_while_its_checkpoints_are_read_leaves_no_observation_and_no_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    source = Cluster.objects.create(alias="us-west", bootstrap_servers="127.0.0.1:1")
    target = Cluster.objects.create(alias="us-east", bootstrap_servers="127.0.0.1:2")
    flow = Flow.objects.create(source=source, target=target)

    def checkpoints(*_: object) -> dict[str, object]:
        Flow.objects.filter(pk=flow.pk).delete()
        return {}

    monkeypatch.setattr(observe.stopped, "stopped_lag", lambda _flow: observe.stopped.StoppedLag())
    monkeypatch.setattr(observe.readers, "latest_checkpoints", checkpoints)
    observation = observe.observe_flow(flow, timezone.now())
    assert observation.pk is None
    assert FlowObservation.objects.count() == 0


def test_a_flow_deleted_while_the_sampler_reads_the_statuses_gets_no_sample_and_no_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The live fuzz test's demo logged a foreign-key error from the flow sampler on Postgres: a flow deleted
    between the sampler's listing and its insert."""
    from controlplane.monitoring.models import FlowSample
    from controlplane.monitoring.services import sampling

    source = Cluster.objects.create(alias="us-west", bootstrap_servers="127.0.0.1:1")
    target = Cluster.objects.create(alias="us-east", bootstrap_servers="127.0.0.1:2")
    backup = Cluster.objects.create(alias="backup", bootstrap_servers="127.0.0.1:3")
    kept = Flow.objects.create(source=source, target=target, topics=["orders"])
    doomed = Flow.objects.create(source=source, target=backup, topics=["payments"])
    statuses = sampling.flow_statuses

    def statuses_then_delete(flows: list[Flow]) -> Any:
        found = statuses(flows)
        Flow.objects.filter(pk=doomed.pk).delete()  # another request deletes it meanwhile
        return found

    monkeypatch.setattr(sampling, "flow_statuses", statuses_then_delete)
    assert sampling.sample_flows(timezone.now()) == 1
    assert list(FlowSample.objects.values_list("flow_id", flat=True)) == [kept.pk]
