"""Checkpoints and translated offsets of a flow, read from Kafka with replication/'s offset translation.

Every function talks to the flow's clusters; a cluster that cannot be read is a 400 naming it (``reading``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from controlplane.clusters.reads import reading
from controlplane.flows.models import Flow
from controlplane.flows.services import flow_config
from replication.emitters.checkpoints import read_checkpoints
from replication.kafka.internaltopics import TIMEOUT, InternalClients, TopicTail, flow_checkpoints_topic
from replication.offsets.translation import OffsetTranslator


def checkpoints(flow: Flow, group: str | None = None) -> list[dict[str, Any]]:
    """The latest checkpoint per (group, remote topic, partition) in the target, optionally of one group."""
    config = flow_config(flow)
    clients = InternalClients()

    def read() -> list[dict[str, Any]]:
        tail = TopicTail(
            clients.consumer(config.target, f"api-checkpoints-{config.name}"), flow_checkpoints_topic(config)
        )
        try:
            found = read_checkpoints(tail, TIMEOUT)
        finally:
            tail.close()
        latest = {(cp.consumer_group_id, cp.topic, cp.partition): cp for cp in found}  # compacted: the last wins
        return [dataclasses.asdict(cp) for key, cp in sorted(latest.items()) if group in (None, key[0])]

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
