"""Broker health without brokers: the partition rules of ``kafka-topics.sh``, the brokers counted down, the API's
"no data" and roles, and the four alert kinds read from the stored rows."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException
from django.utils import timezone
from rest_framework.test import APIClient

from controlplane.alerts.choices import AlertKind, AlertState
from controlplane.alerts.models import Alert, AlertRule
from controlplane.alerts.services import evaluate
from controlplane.clusters.models import Cluster
from controlplane.monitoring.models import BrokerHealth
from controlplane.monitoring.services import brokerhealth
from controlplane.monitoring.services.brokerhealth import PartitionState, classify


def test_partitions_are_counted_by_the_rules_of_kafka_topics() -> None:
    partitions = [
        PartitionState("healthy", 0, leader=1, replicas=(1, 2, 3), isr=(1, 2, 3)),
        PartitionState("shrunk", 0, leader=1, replicas=(1, 2, 3), isr=(1, 2)),  # URP, at min ISR 2
        PartitionState("shrunk", 1, leader=2, replicas=(1, 2, 3), isr=(2,)),  # URP and under min ISR 2
        PartitionState("leaderless", 0, leader=-1, replicas=(3,), isr=(3,)),  # offline, under min ISR
        PartitionState("stale", 0, leader=4, replicas=(4,), isr=(4,)),  # its leader is not in the metadata: offline
    ]
    min_isr = {"healthy": 2, "shrunk": 2, "leaderless": 1, "stale": 1}

    figures = classify(partitions, {1, 2, 3}, min_isr)

    assert figures.partitions == 5
    assert figures.under_replicated == ["shrunk-0", "shrunk-1"]
    assert figures.offline == ["leaderless-0", "stale-0"]
    assert figures.under_min_isr == ["leaderless-0", "shrunk-1"]
    assert classify(partitions, {1, 2, 3}, None).under_min_isr == []  # configs not read: not counted


def _reading(brokers: list[int]) -> dict[str, object]:
    return {**brokerhealth.NO_DATA, "error": "", "brokers": brokers, "partitions": 0, "under_replicated": 0,
            "offline": 0, "under_min_isr": 0, "controller_id": brokers[0]}  # fmt: skip


@pytest.mark.django_db
def test_a_broker_seen_before_and_missing_now_is_down_until_the_cluster_is_edited(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cluster = Cluster.objects.create(alias="west", bootstrap_servers="127.0.0.1:1")
    answers = iter([_reading([1, 2, 3]), _reading([1, 3]), _reading([1, 3])])
    monkeypatch.setattr(brokerhealth, "read", lambda c: next(answers))
    now = timezone.now() - timedelta(seconds=60)  # readings made after the cluster was added, before its edit
    Cluster.objects.filter(pk=cluster.pk).update(updated_at=now - timedelta(seconds=60))
    cluster.refresh_from_db()

    brokerhealth.observe([cluster], {cluster.pk}, now)
    brokerhealth.observe([cluster], {cluster.pk}, now + timedelta(seconds=15))
    shown = brokerhealth.figures(BrokerHealth.objects.get(cluster=cluster))
    assert (shown["brokers_up"], shown["brokers_down"], shown["missing_brokers"]) == (2, 1, [2])

    cluster.save()  # edited after the last reading: another address may be another cluster
    brokerhealth.observe([cluster], {cluster.pk}, timezone.now())
    shown = brokerhealth.figures(BrokerHealth.objects.get(cluster=cluster))
    assert (shown["brokers_up"], shown["brokers_down"], shown["brokers_known"]) == (2, 0, 2)


@pytest.mark.django_db
def test_an_unreachable_cluster_keeps_its_brokers_and_its_figures_say_no_data(monkeypatch: pytest.MonkeyPatch) -> None:
    cluster = Cluster.objects.create(alias="west", bootstrap_servers="127.0.0.1:1")
    monkeypatch.setattr(brokerhealth, "read", lambda c: _reading([1, 2]))
    now = timezone.now() + timedelta(seconds=1)
    brokerhealth.observe([cluster], {cluster.pk}, now)

    assert brokerhealth.observe([cluster], set(), now + timedelta(seconds=15)) == 0

    row = BrokerHealth.objects.get(cluster=cluster)
    shown = brokerhealth.figures(row)
    assert (row.known_brokers, shown["brokers_up"], shown["under_replicated"]) == ([1, 2], None, None)
    assert shown["reason"] == "no data: cluster unreachable"


@pytest.mark.django_db
def test_the_api_says_no_data_before_the_first_observation_and_viewers_read_it(
    api: Callable[[str | None], APIClient],
) -> None:
    cluster = Cluster.objects.create(alias="west", bootstrap_servers="127.0.0.1:1")
    url = f"/api/v1/clusters/{cluster.pk}/health/"

    before = api("viewer").get(url)
    assert before.status_code == 200
    assert before.json()["under_replicated"] is None and before.json()["brokers_up"] is None
    assert before.json()["reason"] == "no data: not observed yet"
    assert api(None).get(url).status_code in (401, 403)
    assert api("viewer").get("/api/v1/clusters/999999/health/").status_code == 404

    BrokerHealth.objects.create(
        cluster=cluster, at=timezone.now(), brokers=[1, 2], known_brokers=[1, 2, 3], controller_id=2,
        partitions=10, under_replicated=3, offline=1, under_min_isr=2,
    )  # fmt: skip
    after = api("viewer").get(url).json()
    assert {k: after[k] for k in ("brokers_up", "brokers_down", "controller_id", "under_replicated")} == {
        "brokers_up": 2,
        "brokers_down": 1,
        "controller_id": 2,
        "under_replicated": 3,
    }
    assert (after["offline"], after["under_min_isr"], after["reason"]) == (1, 2, "")
    listed = api("viewer").get("/api/v1/broker-health/").json()
    assert [(r["alias"], r["under_min_isr"]) for r in listed] == [("west", 2)]


@pytest.mark.django_db
def test_each_broker_kind_fires_per_cluster_above_its_threshold_and_no_data_opens_nothing() -> None:
    AlertRule.objects.all().delete()
    for kind in (
        AlertKind.UNDER_REPLICATED,
        AlertKind.OFFLINE_PARTITIONS,
        AlertKind.UNDER_MIN_ISR,
        AlertKind.BROKERS_DOWN,
    ):
        AlertRule.objects.create(kind=kind, threshold=0, for_seconds=0)
    sick = Cluster.objects.create(alias="sick", bootstrap_servers="127.0.0.1:1")
    well = Cluster.objects.create(alias="well", bootstrap_servers="127.0.0.1:2")
    Cluster.objects.create(alias="unseen", bootstrap_servers="127.0.0.1:3")
    now = timezone.now()
    BrokerHealth.objects.create(
        cluster=sick, at=now, brokers=[1], known_brokers=[1, 2], controller_id=1, partitions=4,
        under_replicated=3, offline=1, under_min_isr=2,
    )  # fmt: skip
    BrokerHealth.objects.create(
        cluster=well, at=now, brokers=[1], known_brokers=[1], controller_id=1, partitions=4,
        under_replicated=0, offline=0, under_min_isr=0,
    )  # fmt: skip

    evaluate.evaluate(now)
    evaluate.evaluate(now + timedelta(seconds=1))

    fired = {(a.kind, a.name, a.value) for a in Alert.objects.filter(state=AlertState.FIRING)}
    assert fired == {
        (AlertKind.UNDER_REPLICATED, "sick", 3.0),
        (AlertKind.OFFLINE_PARTITIONS, "sick", 1.0),
        (AlertKind.UNDER_MIN_ISR, "sick", 2.0),
        (AlertKind.BROKERS_DOWN, "sick", 1.0),
    }
    assert Alert.objects.count() == 4  # "well" is at 0, "unseen" has no data
    message = Alert.objects.get(kind=AlertKind.UNDER_MIN_ISR).message
    assert message == "sick: Partitions under min.insync.replicas 2 partitions above 0"


class ConfigsFuture:
    def __init__(self, value: str | None, error: Exception | None = None) -> None:
        self.value, self.error = value, error

    def result(self, timeout: float | None = None) -> dict[str, SimpleNamespace]:
        if self.error is not None:
            raise self.error
        return {"min.insync.replicas": SimpleNamespace(value=self.value)}


class ConfigsAdmin:
    """An admin client whose DescribeConfigs answers per topic: a value, or the topic's own failure."""

    def __init__(self, answers: dict[str, ConfigsFuture]) -> None:
        self.answers = answers

    def describe_configs(self, resources: list[Any], **_: Any) -> dict[Any, ConfigsFuture]:
        return {r: self.answers[r.name] for r in resources}


def test_a_topic_whose_configs_fail_is_left_out_and_only_all_failing_is_no_data() -> None:
    denied = KafkaException(KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED))
    notes: list[str] = []
    some = ConfigsAdmin({"orders": ConfigsFuture("2"), "secret": ConfigsFuture(None, denied)})
    assert brokerhealth._min_isr(some, ["orders", "secret"], notes) == {"orders": 2}  # type: ignore[arg-type]
    assert notes[0].startswith("min.insync.replicas not read for 1 of 2 topics (first: secret:")
    none = ConfigsAdmin({"secret": ConfigsFuture(None, denied)})
    assert brokerhealth._min_isr(none, ["secret"], notes) is None  # type: ignore[arg-type]
