"""TopicSync decisions that need no broker: which source topics a flow replicates."""

from __future__ import annotations

import logging
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import ConfigEntry, ConfigSource, NewTopic

from replication.kafka.provisioning import ProvisioningError, create_missing, wait_for_metadata
from replication.kafka.topicsync import MAX_TOPIC_NAME, TopicSync
from tests.replication.fakes import flow


@dataclass
class _Topic:
    partitions: dict[int, Any]
    error: Any = None


@dataclass
class _Metadata:
    topics: dict[str, _Topic] = field(default_factory=dict)
    brokers: dict[int, Any] = field(default_factory=lambda: {0: object()})


class _Admin:
    def __init__(self, topics: dict[str, int]) -> None:
        self.metadata = _Metadata({name: _Topic(dict.fromkeys(range(n))) for name, n in topics.items()})

    def list_topics(self, timeout: float = 0) -> _Metadata:
        return self.metadata


def test_a_topic_whose_remote_name_would_exceed_kafkas_limit_is_skipped_not_fatal() -> None:
    long_name = "x" * (MAX_TOPIC_NAME - 3)  # "us-west." makes it too long
    admin = _Admin({"orders": 3, long_name: 1, "__consumer_offsets": 8})
    sync = TopicSync(flow(), admin, admin)  # type: ignore[arg-type]
    assert sync.source_topics() == {"orders": 3}


class _CountingAdmin(_Admin):
    def __init__(self, topics: dict[str, int]) -> None:
        super().__init__(topics)
        self.timeouts: list[float] = []

    def list_topics(self, timeout: float = 0) -> _Metadata:
        self.timeouts.append(timeout)
        return self.metadata


def test_building_a_topic_sync_asks_no_cluster_and_a_listing_takes_the_callers_timeout() -> None:
    source, target = _CountingAdmin({"orders": 3}), _CountingAdmin({})
    sync = TopicSync(flow(), source, target)  # type: ignore[arg-type]
    assert (source.timeouts, target.timeouts) == ([], [])
    assert sync.source_topics(timeout=5.0) == {"orders": 3}
    assert (source.timeouts, target.timeouts) == ([5.0], [])
    assert sync.replication_factor == 1  # the target's one broker, asked once when first needed
    assert sync.replication_factor == 1
    assert len(target.timeouts) == 1


@dataclass
class _Partition:
    leader: int = 0


class _SlowController(_Admin):
    """A target whose controller creates the topics but answers CreateTopics after the caller's wait."""

    def __init__(self) -> None:
        super().__init__({})
        self.requests: list[list[str]] = []

    def create_topics(self, topics: list[NewTopic]) -> dict[str, Future[None]]:
        self.requests.append([t.topic for t in topics])
        for new in topics:
            self.metadata.topics[new.topic] = _Topic({p: _Partition() for p in range(new.num_partitions)})
        return {t.topic: Future() for t in topics}  # never answered


def test_an_unanswered_create_topics_is_awaited_in_the_metadata_not_fatal(caplog: pytest.LogCaptureFixture) -> None:
    """The standalone runner exited with a bare TimeoutError when a busy target answered a batch of 100
    CreateTopics after 30 s (found by the scale bench on a loaded machine), though the topics were being created."""
    source, target = _Admin({f"t{n:03d}": 2 for n in range(150)}), _SlowController()
    sync = TopicSync(flow(sync_topic_configs_enabled=False), source, target)  # type: ignore[arg-type]
    sync.create_timeout = 0.05
    with caplog.at_level(logging.WARNING, "replication.kafka.topicsync"):
        sync.ensure_remote_topics(sync.source_topics())
    assert [len(r) for r in target.requests] == [100, 50]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "did not answer the creation of 150 remote topics" in warnings[0]
    remote = {sync.remote_topic(t): 2 for t in sync.source_topics()}
    wait_for_metadata(target, remote, deadline=0.0, clock=lambda: 1.0)  # type: ignore[arg-type]


class _Entry:
    def __init__(self, value: str) -> None:
        self.value = value


class _ConfigAdmin(_Admin):
    """Answers DescribeConfigs with CreateTime, or UNKNOWN_TOPIC_OR_PART for a topic in `gone`; records the alters."""

    def __init__(self, topics: dict[str, int], gone: set[str]) -> None:
        super().__init__(topics)
        self.gone = gone
        self.altered: list[str] = []

    def _answer(self, name: str, value: Any) -> Future[Any]:
        future: Future[Any] = Future()
        if name in self.gone:
            future.set_exception(KafkaException(KafkaError(KafkaError.UNKNOWN_TOPIC_OR_PART)))
        else:
            future.set_result(value)
        return future

    def describe_configs(self, resources: list[Any]) -> dict[Any, Future[Any]]:
        return {r: self._answer(r.name, {"message.timestamp.type": _Entry("CreateTime")}) for r in resources}

    def incremental_alter_configs(self, resources: list[Any]) -> dict[Any, Future[Any]]:
        self.altered += [r.name for r in resources]
        return {r: self._answer(r.name, None) for r in resources}


def test_a_heartbeats_topic_deleted_since_it_was_listed_is_not_stamped_and_stops_nothing() -> None:
    # A source's heartbeats topics come and go with other flows: one deleted between the listing and the stamping
    # must not stop the flow's provisioning (it stopped the standalone runner with "Unknown topic or partition").
    admin = _ConfigAdmin({"heartbeats": 1, "a.heartbeats": 1}, gone={"a.heartbeats"})
    sync = TopicSync(flow(), admin, admin)  # type: ignore[arg-type]
    assert sync.stamp_heartbeats(admin, ["heartbeats", "a.heartbeats", "orders"]) == ["heartbeats"]  # type: ignore[arg-type]
    assert admin.altered == ["heartbeats"]


def test_a_refused_describe_configs_fails_the_stamping_naming_the_acl_it_needs() -> None:
    source, target = _ConfigAdmin({"heartbeats": 1}, gone=set()), _ConfigAdmin({}, gone=set())
    source._answer = lambda name, value: _failed(KafkaError.TOPIC_AUTHORIZATION_FAILED)  # type: ignore[method-assign]
    sync = TopicSync(flow(), source, target)  # type: ignore[arg-type]
    with pytest.raises(KafkaException) as raised:
        sync.stamp_heartbeats(source, ["heartbeats"])  # type: ignore[arg-type]
    assert raised.value.args[0].code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    assert raised.value.args[0].str() == (
        f"{sync.flow.source.alias} refused DESCRIBE_CONFIGS on TOPIC heartbeats (TOPIC_AUTHORIZATION_FAILED): "
        "grant it to the flow's principal"
    )


def test_every_admin_call_of_the_topic_sync_names_the_acl_a_refusal_lacks() -> None:
    # A bare "Broker: Topic authorization failed" says neither which ACL nor on what.
    target = _ConfigAdmin({}, gone=set())
    target.create_topics = lambda new: {n.topic: _failed(KafkaError.TOPIC_AUTHORIZATION_FAILED) for n in new}  # type: ignore[attr-defined]
    sync = TopicSync(flow(sync_topic_configs_enabled=False), _Admin({"orders": 3}), target)  # type: ignore[arg-type]
    with pytest.raises(KafkaException) as raised:
        sync.ensure_remote_topics({"orders": 3}, existing={})
    remote = sync.remote_topic("orders")
    assert raised.value.args[0].str().startswith(f"{sync.flow.target.alias} refused CREATE on TOPIC {remote} ")


def _failed(code: int) -> Future[Any]:
    future: Future[Any] = Future()
    future.set_exception(KafkaException(KafkaError(code)))
    return future


def test_provisioning_names_the_create_acl_a_refused_internal_topic_lacks() -> None:
    admin = _Admin({})
    admin.create_topics = lambda new: {n.topic: _failed(KafkaError.TOPIC_AUTHORIZATION_FAILED) for n in new}  # type: ignore[attr-defined]
    with pytest.raises(ProvisioningError) as raised:
        create_missing(admin, [NewTopic("heartbeats", 1, 1)], deadline=1e12, cluster="backup")  # type: ignore[arg-type]
    assert str(raised.value) == (
        "creating topic heartbeats: backup refused CREATE on TOPIC heartbeats (TOPIC_AUTHORIZATION_FAILED): "
        "grant it to the flow's principal"
    )


# --- use.defaults.from: which configs a remote topic takes from its source topic -----------------------------


def _entry(name: str, value: str | None, source: ConfigSource, **flags: bool) -> ConfigEntry:
    return ConfigEntry(name, value, source=source.value, **flags)


class _DescribingAdmin(_Admin):
    """Answers DescribeConfigs from `configs` (topic -> its entries, as a broker lists them) and records the
    legacy AlterConfigs it receives (remote topic -> the overrides set)."""

    def __init__(self, topics: dict[str, int], configs: dict[str, list[ConfigEntry]]) -> None:
        super().__init__(topics)
        self.configs = configs
        self.set: dict[str, dict[str, str]] = {}

    def describe_configs(self, resources: list[Any]) -> dict[Any, Future[Any]]:
        answers = {}
        for resource in resources:
            future: Future[Any] = Future()
            future.set_result({e.name: e for e in self.configs.get(resource.name, [])})
            answers[resource] = future
        return answers

    def alter_configs(self, resources: list[Any]) -> dict[Any, Future[Any]]:
        answers = {}
        for resource in resources:
            self.set[resource.name] = dict(resource.set_config_dict)
            future: Future[Any] = Future()
            future.set_result(None)
            answers[resource] = future
        return answers


SOURCE_ORDERS = [
    _entry("retention.ms", "86400000", ConfigSource.DYNAMIC_TOPIC_CONFIG),
    _entry("cleanup.policy", "delete", ConfigSource.DEFAULT_CONFIG),
    _entry("segment.bytes", "1073741824", ConfigSource.DEFAULT_CONFIG),
    _entry("min.insync.replicas", "1", ConfigSource.DEFAULT_CONFIG),  # config.properties.exclude's default
    _entry("message.format.version", "3.0-IV1", ConfigSource.DEFAULT_CONFIG, is_read_only=True),
    _entry("secret.thing", None, ConfigSource.DEFAULT_CONFIG, is_sensitive=True),
    _entry("max.message.bytes", "2097152", ConfigSource.STATIC_BROKER_CONFIG),
]


@pytest.mark.parametrize(
    ("use_defaults_from", "remote"),
    [
        ("target", {"retention.ms": "86400000"}),
        ("source", {"retention.ms": "86400000", "cleanup.policy": "delete", "segment.bytes": "1073741824"}),
    ],
)
def test_use_defaults_from_source_copies_the_source_topics_defaults_and_target_leaves_the_targets(
    use_defaults_from: str, remote: dict[str, str]
) -> None:
    source = _DescribingAdmin({"orders": 1}, {"orders": SOURCE_ORDERS})
    target = _DescribingAdmin({"us-west.orders": 1}, {"us-west.orders": []})
    sync = TopicSync(flow(use_defaults_from=use_defaults_from), source, target)  # type: ignore[arg-type]
    assert sync.sync_configs(["orders"]) == ["us-west.orders"]
    assert target.set == {"us-west.orders": remote}


def test_a_remote_topic_that_already_has_the_source_defaults_is_not_altered_again() -> None:
    source = _DescribingAdmin({"orders": 1}, {"orders": SOURCE_ORDERS})
    synced = [
        _entry("retention.ms", "86400000", ConfigSource.DYNAMIC_TOPIC_CONFIG),
        _entry("cleanup.policy", "delete", ConfigSource.DYNAMIC_TOPIC_CONFIG),
        _entry("segment.bytes", "1073741824", ConfigSource.DYNAMIC_TOPIC_CONFIG),
        _entry("min.insync.replicas", "2", ConfigSource.DEFAULT_CONFIG),
    ]
    target = _DescribingAdmin({"us-west.orders": 1}, {"us-west.orders": synced})
    sync = TopicSync(flow(use_defaults_from="source"), source, target)  # type: ignore[arg-type]
    assert sync.sync_configs(["orders"]) == []
    assert target.set == {}
