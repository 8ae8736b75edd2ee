"""Orchestration endpoints: readable by every role, refused without one; /metrics is Prometheus text."""

from __future__ import annotations

import uuid

import pytest
from django.contrib.auth.models import Group, User
from rest_framework.test import APIClient

from controlplane.orchestration.models import TaskAssignment
from replication.metrics.registry import MetricsRegistry
from tests.controlplane.orchestration.factories import flow, store_report

pytestmark = pytest.mark.django_db


def _client(role: str | None) -> APIClient:
    user = User.objects.create_user(f"u-{role}-{uuid.uuid4().hex[:6]}", password="x")
    if role:
        user.groups.add(Group.objects.get(name=role))
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_metrics_and_validation_need_a_role() -> None:
    assert APIClient().get("/metrics").status_code in (401, 403)
    assert _client(None).get("/metrics").status_code == 403
    assert _client(None).get("/api/v1/orchestration/validation/").status_code == 403


def test_metrics_render_the_rolled_up_task_snapshots() -> None:
    obj = flow({"a": "127.0.0.1:1", "b": "127.0.0.1:2"}, "a", "b", "t")
    registry = MetricsRegistry()
    registry.record_batch("a->b", "t", 0, 42, 4200, 12.0, 3.0)
    registry.set_lag("a->b", "t", 0, 7)
    store_report(TaskAssignment.objects.create(flow=obj, task_id=0, partitions=[["t", 0]]), registry, "a->b")
    response = _client("viewer").get("/metrics")
    assert response.status_code == 200
    text = response.content.decode()
    assert 'mirrorplane_record_count_total{flow="a->b",topic="t",partition="0"} 42' in text
    assert 'mirrorplane_replication_record_lag{flow="a->b",topic="t",partition="0"} 7' in text


def test_validation_lists_desired_partitions_no_task_is_running() -> None:
    obj = flow({"a": "127.0.0.1:1", "b": "127.0.0.1:2"}, "a", "b", "t")
    TaskAssignment.objects.create(flow=obj, task_id=0, partitions=[["t", 0], ["t", 1]])
    body = _client("viewer").get("/api/v1/orchestration/validation/").json()
    assert body["mismatches"] == [
        {"flow": obj.pk, "task_id": 0, "state": "PENDING", "missing": [["t", 0], ["t", 1]], "unexpected": []}
    ]
