"""MM2 and Connect worker keys in MM2 properties files: mapped when they mean something here, else accepted with
one log line each; malformed ones are still refused by name."""

from __future__ import annotations

import logging

import pytest

from replication.config import ConfigError, FlowConfig
from replication.config.mm2properties import load_flows
from replication.mm2.properties import parse_properties

# The shape of MM2's integration tests' properties (MirrorConnectorsIntegrationBaseTest, ...ExactlyOnceTest).
PRIMARY_BACKUP = """
clusters = primary, backup
primary.bootstrap.servers = host1:9092
backup.bootstrap.servers = host2:9092
primary->backup.enabled = true
backup->primary.enabled = true
"""
INTEGRATION_TEST_KEYS = """
max.tasks = 10
topics = test-topic-.*, primary.test-topic-.*, backup.test-topic-.*
groups = consumer-group-.*
sync.topic.acls.enabled = false
emit.checkpoints.interval.seconds = 1
checkpoints.topic.replication.factor = 1
offset.storage.replication.factor = 1
replication.factor = 1
primary.offset.flush.interval.ms = 5000
backup.offset.flush.interval.ms = 2000
offset.lag.max = 0
use.defaults.from = target
"""


def load(text: str, notes: list[tuple[str, str]] | None = None) -> dict[str, FlowConfig]:
    return {flow.name: flow for flow in load_flows(parse_properties(text), notes=notes)}


def config_error(text: str) -> ConfigError:
    with pytest.raises(ConfigError) as error:
        load(text)
    return error.value


def test_an_mm2_integration_test_file_loads_with_its_worker_keys_mapped_to_the_flows_into_each_cluster() -> None:
    flows = load(PRIMARY_BACKUP + INTEGRATION_TEST_KEYS)
    assert flows["backup->primary"].offset_flush_interval_ms == 5000  # primary's worker runs the flows into it
    assert flows["primary->backup"].offset_flush_interval_ms == 2000
    assert flows["primary->backup"].replication_factor == 1


def test_a_flow_setting_wins_over_its_target_workers_which_wins_over_the_global_one() -> None:
    text = PRIMARY_BACKUP + (
        "offset.flush.interval.ms = 300\nbackup.offset.flush.interval.ms = 200\n"
        "primary->backup.offset.flush.interval.ms = 100\n"
    )
    flows = load(text)
    assert flows["primary->backup"].offset_flush_interval_ms == 100
    assert flows["backup->primary"].offset_flush_interval_ms == 300
    assert (
        load(PRIMARY_BACKUP + "offset.flush.interval.ms = 300\nbackup.offset.flush.interval.ms = 200\n")[
            "primary->backup"
        ].offset_flush_interval_ms
        == 200
    )


def test_a_cluster_worker_setting_out_of_bounds_is_named_as_written() -> None:
    error = config_error(PRIMARY_BACKUP + "backup.offset.flush.interval.ms = 0")
    assert error.property_name == "backup.offset.flush.interval.ms"
    assert config_error(PRIMARY_BACKUP + "backup.offset.flush.interval.ms = 5s").property_name == (
        "backup.offset.flush.interval.ms"
    )


def test_keys_without_effect_are_logged_once_each_as_written_with_the_reason(caplog: pytest.LogCaptureFixture) -> None:
    notes: list[tuple[str, str]] = []
    with caplog.at_level(logging.INFO, logger="replication.config.mm2properties"):
        load(PRIMARY_BACKUP + INTEGRATION_TEST_KEYS + "primary->backup.offset.lag.max = 10\n", notes)
    assert [key for key, _ in notes] == [
        "max.tasks",
        "checkpoints.topic.replication.factor",
        "offset.storage.replication.factor",
        "offset.lag.max",
        "primary->backup.offset.lag.max",
    ]
    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) == 5
    assert lines[3].startswith("offset.lag.max: no effect in Mirrorplane: MM2 writes an offset sync")
    assert "translation is exact" in lines[3]


def test_the_connect_keys_of_mm2s_dedicated_mode_test_are_accepted_globally_and_per_cluster() -> None:
    # DedicatedMirrorIntegrationTest (testMultiNodeCluster) sets the REST listener and, per cluster, the delay of
    # Connect's scheduled rebalance; MM2 reads both, and Mirrorplane, with no Connect worker, has no use for them.
    notes: list[tuple[str, str]] = []
    text = "listeners = http://localhost:0\nprimary.scheduled.rebalance.max.delay.ms = 1000\n"
    flows = load(PRIMARY_BACKUP + text, notes)
    assert set(flows) == {"primary->backup", "backup->primary"}
    assert [key for key, _ in notes] == ["listeners", "primary.scheduled.rebalance.max.delay.ms"]
    assert config_error(PRIMARY_BACKUP + "backup.scheduled.rebalance.max.delay.ms = soon").reason == (
        "expected an integer, got 'soon'"
    )


def test_top_level_client_keys_reach_every_flow_and_the_clusters_and_flows_own_win() -> None:
    # MM2 reads a top-level `consumer.*` for the source consumer of every flow and `producer.*` for the producer
    # to every target (its forwarding-admin test sets its SASL settings so).
    text = (
        "consumer.isolation.level = read_committed\nconsumer.fetch.min.bytes = 10\nproducer.linger.ms = 7\n"
        "primary.consumer.fetch.min.bytes = 20\nbackup->primary.producer.linger.ms = 9\n"
    )
    flows = load(PRIMARY_BACKUP + text)
    assert flows["primary->backup"].consumer_overrides == {"isolation.level": "read_committed", "fetch.min.bytes": "20"}
    assert flows["backup->primary"].consumer_overrides == {"isolation.level": "read_committed", "fetch.min.bytes": "10"}
    assert flows["primary->backup"].producer_overrides == {"linger.ms": "7"}
    assert flows["backup->primary"].producer_overrides == {"linger.ms": "9"}
    assert config_error(PRIMARY_BACKUP + "consumer.no.such.setting = 1").property_name == "consumer.no.such.setting"


def test_a_cluster_named_like_a_client_prefix_keeps_its_own_keys() -> None:
    text = "clusters = consumer, b\nconsumer.bootstrap.servers = h1:9092\nb.bootstrap.servers = h2:9092\n"
    flows = load(text + "consumer->b.enabled = true\nconsumer.consumer.fetch.min.bytes = 5\n")
    assert flows["consumer->b"].source.bootstrap_servers == "h1:9092"
    assert flows["consumer->b"].consumer_overrides == {"fetch.min.bytes": "5"}


def test_use_defaults_from_is_a_flow_property_set_globally_or_per_flow() -> None:
    flows = load(PRIMARY_BACKUP + "use.defaults.from = source\nbackup->primary.use.defaults.from = target\n")
    assert flows["primary->backup"].use_defaults_from == "source"
    assert flows["backup->primary"].use_defaults_from == "target"
    assert load(PRIMARY_BACKUP)["primary->backup"].use_defaults_from == "target"  # MM2's default


@pytest.mark.parametrize(
    ("line", "key", "reason"),
    [
        ("offset.lag.max = lots", "offset.lag.max", "expected an integer, got 'lots'"),
        ("primary.offset.lag.max = 1.5", "primary.offset.lag.max", "expected an integer, got '1.5'"),
        ("use.defaults.from = both", "use.defaults.from", "'both' is not one of source, target"),
        ("exactly.once.source.support = on", "exactly.once.source.support", "expected one of enabled, preparing"),
        ("offset.lag.maximum = 1", "offset.lag.maximum", "unknown property"),
        ("backup.offset.flush.timeout = 1", "backup.offset.flush.timeout", "unknown property"),
    ],
)
def test_malformed_or_unknown_keys_are_still_refused_by_name(line: str, key: str, reason: str) -> None:
    error = config_error(PRIMARY_BACKUP + line)
    assert error.property_name == key
    assert error.reason.startswith(reason)


# --- exactly.once.source.support ---------------------------------------------------------------------------


def exactly_once(text: str) -> dict[str, bool]:
    return {name: flow.exactly_once for name, flow in load(PRIMARY_BACKUP + text).items()}


def test_global_exactly_once_source_support_enabled_makes_every_flow_exactly_once() -> None:
    assert exactly_once("exactly.once.source.support = enabled") == {"primary->backup": True, "backup->primary": True}
    assert exactly_once("exactly.once.source.support = ENABLED") == {"primary->backup": True, "backup->primary": True}


def test_a_target_clusters_exactly_once_source_support_covers_the_flows_into_it_only() -> None:
    assert exactly_once("backup.exactly.once.source.support = enabled") == {
        "primary->backup": True,
        "backup->primary": False,
    }
    assert exactly_once("exactly.once.source.support = enabled\nprimary.exactly.once.source.support = disabled") == {
        "primary->backup": True,
        "backup->primary": False,
    }


@pytest.mark.parametrize("value", ["preparing", "disabled"])
def test_preparing_and_disabled_mean_at_least_once(value: str, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="replication.config.mm2properties"):
        assert exactly_once(f"exactly.once.source.support = {value}") == {
            "primary->backup": False,
            "backup->primary": False,
        }
    preparing = [r.getMessage() for r in caplog.records if "rolling upgrade" in r.getMessage()]
    assert len(preparing) == (value == "preparing")


def test_a_flows_own_exactly_once_wins_when_it_agrees_or_the_worker_is_preparing() -> None:
    assert exactly_once("exactly.once.source.support = enabled\nprimary->backup.exactly.once = true") == {
        "primary->backup": True,
        "backup->primary": True,
    }
    assert exactly_once("exactly.once.source.support = preparing\nprimary->backup.exactly.once = true") == {
        "primary->backup": True,
        "backup->primary": False,
    }


@pytest.mark.parametrize(
    ("text", "own", "worker"),
    [
        (
            "backup.exactly.once.source.support = enabled\nprimary->backup.exactly.once = false",
            "primary->backup.exactly.once",
            "backup.exactly.once.source.support = enabled",
        ),
        (
            "exactly.once.source.support = disabled\nexactly.once = true",
            "exactly.once",
            "exactly.once.source.support = disabled",
        ),
    ],
)
def test_a_flows_exactly_once_contradicting_its_workers_support_names_both_keys(
    text: str, own: str, worker: str
) -> None:
    error = config_error(PRIMARY_BACKUP + text)
    assert error.property_name == own
    assert worker in error.reason


def test_collected_errors_name_the_contradiction_once_per_flow() -> None:
    errors: list[ConfigError] = []
    text = PRIMARY_BACKUP + "exactly.once.source.support = enabled\nprimary->backup.exactly.once = false\n"
    flows = load_flows(parse_properties(text), errors)
    assert [flow.name for flow in flows] == ["backup->primary"]
    assert [e.property_name for e in errors] == ["primary->backup.exactly.once"]


def test_exactly_once_source_support_for_one_flow_is_refused_as_a_worker_setting() -> None:
    error = config_error(PRIMARY_BACKUP + "primary->backup.exactly.once.source.support = enabled")
    assert error.property_name == "primary->backup.exactly.once.source.support"
    assert "backup" not in error.reason and "<alias>.exactly.once.source.support" in error.reason
