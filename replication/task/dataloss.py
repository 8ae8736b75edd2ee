"""Loud data-loss detection: never jump over a gap silently; say how many records were lost, and why."""

from __future__ import annotations

from dataclasses import dataclass

from replication.config import FlowConfig
from replication.kafka.positions import Position
from replication.offsets.partitionstate import PartitionState


class DataLossError(RuntimeError):
    """Records of a source partition are gone before they were replicated: `lost` of them."""

    def __init__(self, topic: str, partition: int, lost: int, reason: str, resume_at: int | None) -> None:
        super().__init__(f"{topic}-{partition}: {lost} records lost: {reason}")
        self.topic = topic
        self.partition = partition
        self.lost = lost
        self.reason = reason
        self.resume_at = resume_at


# librdkafka's spellings of the log's end for auto.offset.reset (MM2's Java consumer says `latest`).
_AT_END = frozenset({"latest", "largest", "end"})


def starts_at_end(flow: FlowConfig) -> bool:
    """Whether a partition without a stored position starts at the source's end offset: the flow's consumer has
    `auto.offset.reset = latest` (`<source>.consumer.auto.offset.reset` in an MM2 file). Otherwise it starts at the
    log start, as MM2's consumer does by default (earliest)."""
    return flow.consumer_overrides.get("auto.offset.reset", "earliest").strip().lower() in _AT_END


@dataclass(frozen=True)
class StartPosition:
    offset: int
    loss: DataLossError | None = None


def check_start(
    flow: FlowConfig, topic: str, partition: int, stored: Position | None, low: int, high: int
) -> StartPosition:
    """Where to resume a partition, given its stored position and the source's current offsets. A stored position
    always wins; without one, the log start, or the end (``high``) when the consumer says latest."""
    if stored is None:
        return StartPosition(high if starts_at_end(flow) else low)
    position = stored.next_offset
    if position < low:
        return StartPosition(low, retention_gap(topic, partition, position, low))
    if position > high:
        return StartPosition(low, recreated(topic, partition, position, high, stored.high_watermark, low))
    return StartPosition(position)


def loss_on_out_of_range(flow: FlowConfig, state: PartitionState, low: int, high: int) -> DataLossError | None:
    """The consumer's position left the source log while running: retention overtook us, or a recreate."""
    position = state.acked_next
    if position < low:
        return retention_gap(state.topic, state.partition, position, low)
    if position > high:
        return recreated(state.topic, state.partition, position, high, state.hw, low)
    return None


def retention_gap(topic: str, partition: int, position: int, low: int) -> DataLossError:
    reason = (
        f"retention gap: offsets {position}..{low - 1} were deleted at the source before they were replicated; "
        f"the source log now starts at {low}"
    )
    return DataLossError(topic, partition, low - position, reason, resume_at=low)


def recreated(topic: str, partition: int, position: int, high: int, last_hw: int, low: int) -> DataLossError:
    lost = max(last_hw - position, 0)
    reason = (
        f"source topic recreated or truncated: the replicated position {position} is beyond the source end offset "
        f"{high}; {lost} records of the old topic (up to offset {last_hw}) were never replicated"
    )
    return DataLossError(topic, partition, lost, reason, resume_at=low)


def target_truncated(
    topic: str, partition: int, remote: str, position: int, downstream: int, end: int
) -> DataLossError:
    """The target partition ends before the records stored positions say it holds: replicated records are gone."""
    reason = (
        f"replicated records are gone from the target: {remote} [{partition}] ends at offset {end}, but the records "
        f"replicated before source offset {position} reached offset {downstream - 1} (unclean leader election at the "
        "target, or the remote topic was recreated and written again)"
    )
    return DataLossError(topic, partition, downstream - end, reason, resume_at=position)
