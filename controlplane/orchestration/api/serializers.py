from __future__ import annotations

from typing import Any

from rest_framework import serializers


class FlowStatusSerializer(serializers.Serializer[dict[str, Any]]):
    """Per task and partition: state, replicated position, lag, latency, last error."""

    tasks = serializers.ListField(
        child=serializers.DictField(),
        help_text="per task: state, failure (DATA_LOSS: stopped until the flow is restarted; ERROR: retried; empty "
        "unless FAILED), last_error, worker, lease, placement and partitions",
    )
