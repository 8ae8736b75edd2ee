"""Topic config and ACL sync is best effort: a cluster that does not answer in time is reported, not fatal."""

from __future__ import annotations

from types import SimpleNamespace

from replication.metrics.registry import MetricsRegistry
from replication.task.replicationtask import ReplicationTask
from tests.replication.fakes import flow
from tests.support.fakes import FakeClients


def _unanswered(topics: list[str]) -> list[str]:
    raise TimeoutError()


def test_a_config_sync_without_an_answer_is_a_reported_fault_and_is_tried_again_at_the_next_refresh() -> None:
    config = flow(sync_topic_configs_interval_seconds=600.0)
    metrics, now = MetricsRegistry(), [100.0]
    task = ReplicationTask(config, clients=FakeClients(), metrics=metrics, clock=lambda: now[0])  # type: ignore[arg-type]
    synced: list[list[str]] = []
    topic_sync = SimpleNamespace(sync_configs=_unanswered, sync_acls=synced.append)
    task._sync_configs_and_acls(topic_sync, ["orders"])  # type: ignore[arg-type]  # must not raise: it stopped a 10,000-partition flow's start
    fault = metrics.snapshot()["flows"][config.name]["tasks"]["0"]["fault"]
    assert fault == "topic config and ACL sync failed: no answer in time"
    assert task._next_config_sync == 100.0 and synced == []  # due again at once, not in 600 s

    topic_sync.sync_configs = lambda topics: []
    task._sync_configs_and_acls(topic_sync, ["orders"])  # type: ignore[arg-type]
    assert task._next_config_sync == 700.0 and synced == [["orders"]]
