"""FastListSerializer renders a page exactly as the child serializer renders each object."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from controlplane.clusters.models import Cluster
from controlplane.flows.api.serializers import FlowSerializer
from controlplane.flows.models import Flow

pytestmark = pytest.mark.django_db


def _flows() -> list[Flow]:
    a, b, c = (Cluster.objects.create(alias=x, bootstrap_servers=f"{x}:9092") for x in ("west", "east", "dr"))
    Flow.objects.create(source=a, target=b)
    full = Flow.objects.create(
        source=b,
        target=c,
        paused=True,
        enabled=False,
        generation=7,
        topics=["orders.*", "payments"],
        topics_exclude=["orders\\.internal"],
        groups=["billing"],
        producer_overrides={"linger.ms": "10"},
        consumer_overrides={"fetch.min.bytes": "1"},
        tasks_max=3,
        replication_factor=-1,
        sync_topic_acls_enabled=False,
        emit_checkpoints_interval_seconds=2.5,
        facts_enabled=False,
        facts_lake="s3a://lake/x",
    )
    Flow.objects.filter(pk=full.pk).update(updated_at=timezone.now() + timedelta(microseconds=123))
    return list(Flow.objects.select_related("source", "target").order_by("pk"))


def test_a_page_renders_every_field_as_the_serializer_renders_one_flow() -> None:
    flows = _flows()
    page = FlowSerializer(flows, many=True).data
    one_by_one = [FlowSerializer(f).data for f in flows]
    assert json.dumps(page) == json.dumps(one_by_one)  # the same keys, in the same order, with the same values
    assert page[1]["topics"] == ["orders.*", "payments"] and page[1]["paused"] is True
    assert page[1]["emit_checkpoints_interval_seconds"] == 2.5 and page[1]["source"] == "east"


def test_the_list_api_returns_what_each_flows_detail_returns() -> None:
    from django.contrib.auth.models import User

    flows = _flows()
    client = APIClient()
    client.force_authenticate(User.objects.create_superuser("fast", password="x"))
    listed = client.get("/api/v1/flows/").json()["results"]
    assert [f["id"] for f in listed] == [f.pk for f in flows]
    for row in listed:
        assert row == client.get(f"/api/v1/flows/{row['id']}/").json()
