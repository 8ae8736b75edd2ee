"""`consumer.auto.offset.reset`: where a partition without a stored position starts; a stored one always wins."""

from __future__ import annotations

import pytest

from replication.config.mm2properties import load_flows
from replication.kafka.clients import consumer_config
from replication.kafka.positions import Position
from replication.mm2.properties import parse_properties
from replication.task.dataloss import check_start
from replication.task.starting import plan_start
from tests.replication.fakes import flow

LOW, HIGH = 100, 900  # the source partition's log start and end offsets


@pytest.mark.parametrize(
    ("overrides", "start"),
    [
        ({}, LOW),  # MM2's default: earliest
        ({"auto.offset.reset": "earliest"}, LOW),
        ({"auto.offset.reset": "smallest"}, LOW),
        ({"auto.offset.reset": "latest"}, HIGH),
        ({"auto.offset.reset": "largest"}, HIGH),
        ({"auto.offset.reset": "end"}, HIGH),
    ],
)
def test_a_partition_without_a_stored_position_starts_where_the_consumer_says(
    overrides: dict[str, str], start: int
) -> None:
    found = check_start(flow(consumer_overrides=overrides), "orders", 0, None, LOW, HIGH)
    assert (found.offset, found.loss) == (start, None)


def test_a_stored_position_wins_over_latest() -> None:
    latest = flow(consumer_overrides={"auto.offset.reset": "latest"})
    assert check_start(latest, "orders", 0, Position(500, 900), LOW, HIGH).offset == 500
    gap = check_start(latest, "orders", 0, Position(50, 900), LOW, HIGH)  # retention overtook it: reported
    assert gap.offset == LOW and gap.loss is not None and gap.loss.lost == 50


def test_starting_at_the_end_of_a_new_remote_topic_is_not_taken_for_a_recreated_one() -> None:
    latest = flow(consumer_overrides={"auto.offset.reset": "latest"})
    plan = plan_start(latest, "orders", 0, "us-west.orders", None, HIGH, LOW, 0)
    assert (plan.offset, plan.recreated) == (HIGH, False)


def test_the_consumer_never_resets_silently_whatever_the_override() -> None:
    config = consumer_config(flow(consumer_overrides={"auto.offset.reset": "latest", "fetch.min.bytes": "10"}), 0)
    assert config["auto.offset.reset"] == "error"
    assert config["fetch.min.bytes"] == "10"


def test_an_mm2_files_source_consumer_setting_reaches_the_start() -> None:
    text = (
        "clusters = primary, backup\nprimary.bootstrap.servers = a:1\nbackup.bootstrap.servers = b:1\n"
        "primary->backup.enabled = true\nprimary.consumer.auto.offset.reset = latest\n"
    )
    (config,) = load_flows(parse_properties(text))
    assert check_start(config, "orders", 0, None, LOW, HIGH).offset == HIGH
