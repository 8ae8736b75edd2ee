from __future__ import annotations

from pathlib import Path

import pytest

from replication.config import ClusterConfig, ConfigError, FlowConfig
from replication.config.mm2properties import dump_flows, load_file, load_flows
from replication.mm2.properties import parse_properties

WEST = ClusterConfig("us-west", {"bootstrap.servers": "host1:9092"})
EAST = ClusterConfig("us-east", {"bootstrap.servers": "host2:9092"})

# KIP-382, "Running a dedicated MirrorMaker cluster".
KIP_US_WEST_US_EAST = """
# mm2.properties
clusters = us-west, us-east
us-west.bootstrap.servers = host1:9092
us-east.bootstrap.servers = host2:9092

topics = .*
groups = .*
emit.checkpoints.interval.seconds = 10

us-west.offset.storage.topic = mm2-offsets
us-west->us-east.emit.heartbeats = false
"""

# KIP-382, "MirrorMaker Clusters".
KIP_PRIMARY_BACKUP = """
clusters = primary, backup
primary.bootstrap.servers = localhost:9091
backup.bootstrap.servers = localhost:9092
primary->backup.topics = .*
primary->backup.emit.heartbeats = false
"""

TWO_CLUSTERS = """
clusters = us-west, us-east
us-west.bootstrap.servers = host1:9092
us-east.bootstrap.servers = host2:9092
"""


def load(text: str) -> list[FlowConfig]:
    return load_flows(parse_properties(text))


def config_error(text: str) -> ConfigError:
    with pytest.raises(ConfigError) as error:
        load(text)
    return error.value


# --- parse_properties ---------------------------------------------------------------------------------------


def test_properties_accept_every_java_separator_and_trim_values() -> None:
    text = "a = 1\nb:2\nc 3\n  d\t=\t4  \ne=\nf\n"
    assert parse_properties(text) == {"a": "1", "b": "2", "c": "3", "d": "4", "e": "", "f": ""}


def test_comments_blank_lines_and_duplicate_keys() -> None:
    text = "# comment\n! also a comment\n\n   \na = first\na = last\nb = value # not a comment\n"
    assert parse_properties(text) == {"a": "last", "b": "value # not a comment"}


def test_backslash_continues_a_line_without_the_next_lines_indentation() -> None:
    text = "topics = orders, \\\n          payments,\\\n  # still the value\nnext = x\n"
    assert parse_properties(text) == {"topics": "orders, payments,# still the value", "next": "x"}


def test_escapes_follow_java_so_ported_regexes_keep_their_meaning() -> None:
    text = "topics.exclude = .*\\\\.internal\nk\\:ey = a\\tb\\u0041\\\\\\\\\ntrail = x\\ \n"
    assert parse_properties(text) == {"topics.exclude": ".*\\.internal", "k:ey": "a\tbA\\\\", "trail": "x "}


def test_even_backslashes_do_not_continue_a_line() -> None:
    assert parse_properties("a = x\\\\\nb = y") == {"a": "x\\", "b": "y"}


def test_a_line_without_a_key_names_its_line_number() -> None:
    with pytest.raises(ConfigError, match=r"^line 3: "):
        parse_properties("a = 1\n# c\n = orphan\n")


def test_a_malformed_unicode_escape_names_its_line_number() -> None:
    with pytest.raises(ConfigError, match=r"^line 2: "):
        parse_properties("a = 1\nb = \\u12\n")


# --- load_flows: the KIP-382 examples -----------------------------------------------------------------------


def test_kip_382_us_west_example_mentions_one_flow_without_enabling_it() -> None:
    expected = FlowConfig(
        source=WEST,
        target=EAST,
        enabled=False,
        topics=(".*",),
        groups=(".*",),
        emit_checkpoints_interval_seconds=10.0,
        emit_heartbeats_enabled=False,
    )
    assert load(KIP_US_WEST_US_EAST) == [expected]
    assert load(KIP_US_WEST_US_EAST + "us-west->us-east.enabled = true\n") == [expected.replace(enabled=True)]


def test_kip_382_primary_backup_example() -> None:
    primary = ClusterConfig("primary", {"bootstrap.servers": "localhost:9091"})
    backup = ClusterConfig("backup", {"bootstrap.servers": "localhost:9092"})
    flows = load(KIP_PRIMARY_BACKUP + "backup->primary.enabled = true\n")
    assert flows == [
        FlowConfig(source=primary, target=backup, enabled=False, topics=(".*",), emit_heartbeats_enabled=False),
        FlowConfig(source=backup, target=primary),
    ]


# --- load_flows: which flows, and precedence ----------------------------------------------------------------


def test_flows_are_only_those_enabled_or_configured() -> None:
    assert load(TWO_CLUSTERS) == []
    assert load(TWO_CLUSTERS + "us-west->us-east.enabled = false\n") == []
    assert load(TWO_CLUSTERS + "us-west->us-east.enabled = TRUE\n") == [FlowConfig(source=WEST, target=EAST)]
    configured = load(TWO_CLUSTERS + "us-west->us-east.enabled = false\nus-west->us-east.tasks.max = 3\n")
    assert configured == [FlowConfig(source=WEST, target=EAST, enabled=False, tasks_max=3)]


def test_flows_come_in_the_order_the_file_first_mentions_them() -> None:
    text = TWO_CLUSTERS + "us-east->us-west.enabled = true\nus-west->us-east.enabled = true\n"
    assert [flow.name for flow in load(text)] == ["us-east->us-west", "us-west->us-east"]


def test_a_flow_setting_wins_over_the_global_one() -> None:
    text = TWO_CLUSTERS + (
        "us-west->us-east.tasks.max = 4\ntasks.max = 2\ntopics = orders, payments\n"
        "us-west->us-east.enabled = true\nus-east->us-west.enabled = true\n"
    )
    west_east, east_west = load(text)
    assert (west_east.tasks_max, east_west.tasks_max) == (4, 2)
    assert west_east.topics == east_west.topics == ("orders", "payments")


def test_cluster_settings_reach_the_right_clients() -> None:
    text = """
        clusters = us-west, us-east
        us-west.bootstrap.servers = host1:9092
        us-west.security.protocol = SASL_SSL
        us-west.sasl.mechanism = PLAIN
        us-west.sasl.username = mirror
        us-west.sasl.password = secret
        us-west.consumer.fetch.min.bytes = 1024
        us-east.bootstrap.servers = host2:9092
        us-east.producer.linger.ms = 10
        us-east.producer.compression.type = lz4
        us-west->us-east.enabled = true
        us-west->us-east.producer.linger.ms = 20
        us-east->us-west.enabled = true
    """
    west_east, east_west = load(text)
    assert west_east.source.client == {
        "bootstrap.servers": "host1:9092",
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "PLAIN",
        "sasl.username": "mirror",
        "sasl.password": "secret",
    }
    assert west_east.producer_overrides == {"linger.ms": "20", "compression.type": "lz4"}
    assert west_east.consumer_overrides == {"fetch.min.bytes": "1024"}
    assert east_west.producer_overrides == east_west.consumer_overrides == {}


def test_list_values_are_split_on_commas_and_trimmed() -> None:
    text = TWO_CLUSTERS + "us-west->us-east.topics =  orders ,payments,, audit.*  \nus-west->us-east.groups =\n"
    (flow,) = load(text)
    assert flow.topics == ("orders", "payments", "audit.*")
    assert flow.groups == ()


def test_legacy_names_are_aliases() -> None:
    text = TWO_CLUSTERS + (
        "topics.blacklist = test-.*\nus-west->us-east.groups.blacklist = tmp-.*\n"
        "us-west->us-east.exactly.once = true\nsync.topic.acls = false\n"
    )
    (flow,) = load(text)
    assert (flow.topics_exclude, flow.groups_exclude) == (("test-.*",), ("tmp-.*",))
    assert flow.exactly_once and not flow.sync_topic_acls_enabled


def test_offset_syncs_use_mm2s_name_and_mirrorplanes_old_spelling_still_imports() -> None:
    (mm2,) = load(TWO_CLUSTERS + "us-west->us-east.emit.offset-syncs.enabled = false\n")
    (old,) = load(TWO_CLUSTERS + "us-west->us-east.emit.offset.syncs.enabled = false\n")
    assert not mm2.emit_offset_syncs_enabled and not old.emit_offset_syncs_enabled
    exported = dump_flows([old])
    assert "us-west->us-east.emit.offset-syncs.enabled = false" in exported
    assert "emit.offset.syncs" not in exported


def test_real_mm2_files_internal_topic_settings_are_accepted_and_replication_factor_is_kept() -> None:
    text = TWO_CLUSTERS + (
        "replication.factor = 3\ncheckpoints.topic.replication.factor = 1\n"
        "heartbeats.topic.replication.factor = 1\noffset-syncs.topic.replication.factor = 1\n"
        "offset.storage.replication.factor = 1\nstatus.storage.replication.factor = 1\n"
        "config.storage.replication.factor = 1\nus-west->us-east.enabled = true\n"
        "us-west->us-east.offset-syncs.topic.location = target\n"
    )
    (flow,) = load(text)
    assert flow.replication_factor == 3
    assert flow.offset_syncs_topic_location == "target"


# --- load_flows: errors name the property -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("us-west->us-east.tasks.max = two", "us-west->us-east.tasks.max: expected an integer, got 'two'"),
        ("tasks.max = 1.5", "tasks.max: expected an integer, got '1.5'"),
        ("us-west->us-east.exactly.once = yes", "us-west->us-east.exactly.once: expected true or false, got 'yes'"),
        ("emit.heartbeats = 1", "emit.heartbeats: expected true or false, got '1'"),
        ("refresh.topics.interval.seconds = 5s", "refresh.topics.interval.seconds: expected a number, got '5s'"),
        ("us-west->us-east.emit.heartbeats.interval.seconds = nan", "expected a number, got 'nan'"),
        ("us-west->us-east.replication.factor = 0x3", "expected an integer, got '0x3'"),
    ],
)
def test_malformed_values_name_the_property_as_written(line: str, message: str) -> None:
    error = config_error(TWO_CLUSTERS + "us-west->us-east.enabled = true\n" + line)
    assert message in str(error)
    assert str(error).startswith(line.split(" =")[0] + ": ")


def test_a_malformed_enabled_names_the_property() -> None:
    assert str(config_error(TWO_CLUSTERS + "us-west->us-east.enabled = on")).startswith("us-west->us-east.enabled: ")


@pytest.mark.parametrize(
    "key",
    [
        "us-west->us-east.topicz",
        "topicz",
        "rename.topics",
        "us-west->us-east.rename.topics",
        "producer.linger.ms",
        "enabled",
        "us-central.bootstrap.servers",
    ],
)
def test_unknown_properties_are_refused_by_name(key: str) -> None:
    assert config_error(TWO_CLUSTERS + f"{key} = true").property_name == key


@pytest.mark.parametrize(
    "key",
    ["us-west.no.such.setting", "us-west.tasks.max", "us-east.producer.no.such", "us-west->us-east.consumer.no.such"],
)
def test_client_settings_unknown_to_librdkafka_are_refused_by_name(key: str) -> None:
    error = config_error(TWO_CLUSTERS + f"us-west->us-east.enabled = true\n{key} = 1")
    assert str(error) == f"{key}: unknown property"


def test_a_client_value_librdkafka_refuses_names_the_setting_even_through_an_alias() -> None:
    error = config_error(TWO_CLUSTERS + "us-west.linger.ms = soon\nus-west.security.protocol = SSL")
    assert error.property_name == "us-west.linger.ms"


def test_a_client_combination_librdkafka_refuses_gives_its_reason() -> None:
    error = config_error(TWO_CLUSTERS + "us-west.security.protocol = SASL_SSL\nus-west.sasl.mechanism = PLAIN")
    assert error.property_name.startswith("us-west.")
    assert "sasl.username and sasl.password must be set" in error.reason


def test_a_flow_between_unknown_clusters_names_the_property() -> None:
    assert config_error(TWO_CLUSTERS + "us-west->eu.enabled = true").property_name == "us-west->eu.enabled"
    assert config_error(TWO_CLUSTERS + "eu->us-east.topics = x").property_name == "eu->us-east.topics"


@pytest.mark.parametrize("clusters", ["", "clusters =\n", "clusters = , \n", "clusters = a, a\n"])
def test_clusters_is_required(clusters: str) -> None:
    assert config_error(clusters + "a.bootstrap.servers = h:1").property_name == "clusters"


def test_an_invalid_regex_names_the_property_as_written() -> None:
    error = config_error(TWO_CLUSTERS + "us-west->us-east.topics = orders, [")
    assert error.property_name == "us-west->us-east.topics"
    assert str(error).startswith("us-west->us-east.topics: invalid regular expression '['")
    assert config_error(TWO_CLUSTERS + "topics = [\nus-west->us-east.enabled = true").property_name == "topics"


def test_a_value_flowconfig_refuses_is_named_as_written() -> None:
    text = TWO_CLUSTERS + "us-west->us-east.enabled = true\nus-west->us-east.tasks.max = 0"
    assert config_error(text).property_name == "us-west->us-east.tasks.max"
    text = TWO_CLUSTERS + "us-west->us-east.topics.blacklist = ["
    assert config_error(text).property_name == "us-west->us-east.topics.blacklist"


def test_a_flow_from_a_cluster_to_itself_is_refused() -> None:
    assert config_error(TWO_CLUSTERS + "us-west->us-west.enabled = true").property_name == "target.cluster.alias"


def test_a_flow_cluster_without_bootstrap_servers_is_refused() -> None:
    text = "clusters = a, b\na.bootstrap.servers = h:1\na->b.enabled = true\n"
    assert config_error(text).property_name == "b.bootstrap.servers"


# --- dump_flows ---------------------------------------------------------------------------------------------

SECURE_WEST = ClusterConfig(
    "us-west",
    {
        "bootstrap.servers": "host1:9092,host3:9092",
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "PLAIN",
        "sasl.username": "mirror",
        "sasl.password": " p@ss = word\\ ",
        "ssl.key.password": "keypass",
    },
)


def many_settings_flow() -> FlowConfig:
    return FlowConfig(
        source=SECURE_WEST,
        target=EAST,
        topics=("orders", "payments-.*"),
        topics_exclude=(r".*\.internal", "tmp[0-9]+"),
        groups=(),
        replication_policy_class="org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
        replication_policy_separator="_",
        sync_topic_acls_enabled=False,
        emit_heartbeats_interval_seconds=0.25,
        emit_checkpoints_interval_seconds=10.0,
        sync_group_offsets_enabled=True,
        offset_syncs_topic_location="target",
        exactly_once=True,
        tasks_max=8,
        replication_factor=3,
        on_data_loss="continue",
        producer_overrides={"linger.ms": "20", "compression.type": "zstd"},
        consumer_overrides={"fetch.min.bytes": "65536"},
    )


def test_dump_then_load_gives_back_equal_flows() -> None:
    flows = [
        many_settings_flow(),
        FlowConfig(source=EAST, target=SECURE_WEST),
        FlowConfig(source=EAST, target=ClusterConfig("backup", {"bootstrap.servers": "b:1"}), enabled=False),
    ]
    assert load(dump_flows(flows)) == flows


def test_dump_writes_only_what_differs_from_the_defaults() -> None:
    text = dump_flows([FlowConfig(source=WEST, target=EAST, tasks_max=2)])
    assert text.splitlines()[1:] == [
        "clusters = us-west, us-east",
        "us-west.bootstrap.servers = host1:9092",
        "us-east.bootstrap.servers = host2:9092",
        "",
        "us-west->us-east.enabled = true",
        "us-west->us-east.tasks.max = 2",
    ]


def dump_error(flows: list[FlowConfig]) -> str:
    with pytest.raises(ConfigError) as error:
        dump_flows(flows)
    return error.value.property_name


def test_dump_refuses_what_the_format_cannot_hold() -> None:
    other_west = ClusterConfig("us-west", {"bootstrap.servers": "elsewhere:9092"})
    flow = FlowConfig(source=WEST, target=EAST)
    assert dump_error([flow, FlowConfig(source=EAST, target=other_west)]) == "us-west"
    assert dump_error([flow, flow]) == "us-west->us-east"
    assert dump_error([flow.replace(topics=("a{1,3}",))]) == "us-west->us-east.topics"


def test_redaction_hides_passwords_keys_and_secrets_only() -> None:
    flow = many_settings_flow().replace(
        producer_overrides={"sasl.oauthbearer.client.secret": "s3cr3t", "linger.ms": "5"},
        consumer_overrides={"ssl.key.pem": "-----BEGIN-----", "sasl.oauthbearer.client.id": "mirror"},
    )
    text = dump_flows([flow], redact=True)
    for secret in ("p@ss", "keypass", "s3cr3t", "BEGIN"):
        assert secret not in text
    assert "us-west.sasl.username = mirror" in text
    (loaded,) = load(text)
    assert loaded.source.client["sasl.password"] == "********"
    assert loaded.producer_overrides == {"sasl.oauthbearer.client.secret": "********", "linger.ms": "5"}
    assert loaded.consumer_overrides["sasl.oauthbearer.client.id"] == "mirror"
    assert loaded.source.client["bootstrap.servers"] == SECURE_WEST.client["bootstrap.servers"]


def test_redaction_covers_java_jaas_config_although_librdkafka_refuses_it_on_load() -> None:
    flow = FlowConfig(source=WEST, target=EAST, producer_overrides={"sasl.jaas.config": "Module password=x;"})
    text = dump_flows([flow], redact=True)
    assert "password=x" not in text
    assert "us-west->us-east.producer.sasl.jaas.config = ********" in text
    assert config_error(dump_flows([flow])).property_name == "us-west->us-east.producer.sasl.jaas.config"


def test_load_file_reads_utf8(tmp_path: Path) -> None:
    path = tmp_path / "mm2.properties"
    path.write_text(KIP_PRIMARY_BACKUP + "primary->backup.topics = café\n", encoding="utf-8")
    (flow,) = load_file(path)
    assert flow.topics == ("café",)


def test_collecting_errors_names_every_wrong_property_of_a_flow_not_only_the_first() -> None:
    text = TWO_CLUSTERS + (
        "us-west->us-east.enabled = true\n"
        "us-west->us-east.tasks.max = two\n"
        "us-west->us-east.topics = (unclosed\n"
        "us-west->us-east.on.data.loss = ignore\n"
        "us-west->us-east.producer.no.such = 1\n"
    )
    errors: list[ConfigError] = []
    assert load_flows(parse_properties(text), errors) == []
    assert sorted(error.property_name for error in errors) == [
        "us-west->us-east.on.data.loss",
        "us-west->us-east.producer.no.such",
        "us-west->us-east.tasks.max",
        "us-west->us-east.topics",
    ]
