"""Deleting an object while another transaction inserts a row that references it (the sampler's sample, a worker's
report): Django deletes the cascade table by table and then the row, so a reference committed in between made the
delete fail with a 500 on Postgres (found by the live schemathesis test). The delete locks the row first: the other
transaction's commit waits for it and fails, and the delete succeeds."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.db import IntegrityError, connection, connections, transaction
from django.db.models.sql.subqueries import DeleteQuery
from django.utils import timezone
from rest_framework.test import APIClient

from controlplane.clusters.models import Cluster
from controlplane.flows.models import Flow
from controlplane.monitoring.models import FlowSample

pytestmark = pytest.mark.django_db(transaction=True)


def _waiting_on_a_lock() -> int:
    with connections["default"].cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        return int(cursor.fetchone()[0])


def test_a_flow_deleted_while_a_sample_of_it_is_committed_is_deleted(
    api: Callable[[str | None], APIClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("SQLite's IMMEDIATE transactions serialise writers: no interleaving to test")
    a, b = (Cluster.objects.create(alias=x, bootstrap_servers=f"{x}:9092") for x in ("west", "east"))
    flow = Flow.objects.create(source=a, target=b)
    client = api("admin")
    inserted, collected = threading.Event(), threading.Event()
    sampler_error: list[BaseException] = []

    def sampler() -> None:  # inserts and commits a sample of the flow between the delete's cascade and its last row
        try:
            with transaction.atomic():
                inserted.set()
                assert collected.wait(30)
                FlowSample.objects.create(flow_id=flow.pk, at=timezone.now(), records=1)
        except IntegrityError as exc:
            sampler_error.append(exc)
        finally:
            connections.close_all()

    thread = threading.Thread(target=sampler)
    thread.start()
    assert inserted.wait(30)
    original = DeleteQuery.delete_batch

    def delete_after_the_sample_commits(self: DeleteQuery, pk_list: list[Any], using: str) -> Any:
        if self.model is Flow:  # the samples are deleted, the flow not yet: let the sampler commit now
            collected.set()
            deadline = time.monotonic() + 30
            while thread.is_alive() and not _waiting_on_a_lock():
                assert time.monotonic() < deadline
                time.sleep(0.02)
        return original(self, pk_list, using)

    monkeypatch.setattr(DeleteQuery, "delete_batch", delete_after_the_sample_commits)
    status = client.delete(f"/api/v1/flows/{flow.pk}/").status_code
    thread.join(30)
    assert status == 204
    assert not Flow.objects.filter(pk=flow.pk).exists() and not FlowSample.objects.filter(flow_id=flow.pk).exists()
    assert len(sampler_error) == 1  # the sample of a deleted flow is refused: the sampler's problem, not a 500
