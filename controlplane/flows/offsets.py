"""Checkpoints and translated offsets of a flow, read from Kafka with replication/'s offset translation.

Every function talks to the flow's clusters; a cluster that cannot be read is a 400 naming it (``reading``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from controlplane.clusters.reads import reading
from controlplane.flows.models import Flow
from controlplane.flows.services import flow_config
from replication.kafka.clients import ClientFactory
from replication.kafka.internaltopics import TIMEOUT, TopicTail, flow_checkpoints_topic
from replication.mm2.records import latest_checkpoints
from replication.offsets.checkpoints import read_checkpoints
from replication.offsets.translation import OffsetTranslator


def checkpoints(flow: Flow, group: str | None = None) -> list[dict[str, Any]]:
    """The latest checkpoint per (group, remote topic, partition) in the target, optionally of one group."""
    config = flow_config(flow)
    clients = ClientFactory()

    def read() -> list[dict[str, Any]]:
        tail = TopicTail(
            clients.consumer(config.target, f"api-checkpoints-{config.name}"), flow_checkpoints_topic(config)
        )
        try:
            found = read_checkpoints(tail, TIMEOUT)
        finally:
            tail.close()
        return [
            dataclasses.asdict(cp)
            for name, partitions in sorted(latest_checkpoints(found).items())
            if group in (None, name)
            for _, cp in sorted(partitions.items())
        ]

    return reading(config.target.alias, read, [flow.target])


def translated_offsets(flow: Flow, group: str) -> list[dict[str, Any]]:
    """The source group's committed offsets translated to the target: exact from offset syncs, else by timestamp."""
    config = flow_config(flow)

    def read() -> list[dict[str, Any]]:
        translator = OffsetTranslator(config)
        try:
            rows = translator.translate_group(group)
        finally:
            translator.close()
        return [{**dataclasses.asdict(row), "approximate": row.approximate} for row in rows]

    return reading(config.name, read, [flow.source, flow.target])
