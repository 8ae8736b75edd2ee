"""The flow form's preview warns when the topic filter selects no source topic (a `\\d` that a properties
file turns into `d` would otherwise match nothing silently)."""

from __future__ import annotations

from typing import Any

import pytest

from controlplane.clusters.models import Cluster
from controlplane.flows.defaults import flow_default
from controlplane.ui.services import preview

pytestmark = pytest.mark.django_db
TOPICS = ["heartbeats", "orders-1", "orders-2", "payments"]


def _values(topics: list[str]) -> dict[str, Any]:
    west = Cluster.objects.create(alias="us-west", bootstrap_servers="127.0.0.1:1")
    east = Cluster.objects.create(alias="us-east", bootstrap_servers="127.0.0.1:2")
    names = ("topics_exclude", "replication_policy_class", "replication_policy_separator")
    return {"source": west, "target": east, "topics": topics, **{name: flow_default(name) for name in names}}


def test_a_filter_that_selects_only_heartbeats_is_warned_about(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(preview, "source_topics", lambda source: TOPICS)
    result = preview.preview(_values(["orders-d+"]), None)
    assert result["replicated"] == 1  # heartbeats always flow
    assert "matches no source topic" in result["warning"]
    assert "orders-d+" in result["warning"] and "none of the 4 topics on us-west" in result["warning"]


def test_a_filter_that_selects_a_topic_has_no_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(preview, "source_topics", lambda source: TOPICS)
    result = preview.preview(_values([r"orders-\d+"]), None)
    assert (result["replicated"], result["warning"]) == (3, None)
