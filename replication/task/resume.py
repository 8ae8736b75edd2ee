"""Resume after a crash without duplicates: skip, at the source, exactly the records the target already holds.

At least once, each stored position carries D, the target offset that follows the last record acknowledged before
it (positions.Position.downstream). A task killed before it stored newer positions has left records past D that
the target acknowledged (or wrote without telling it). On start the target partition's end offset E says how many
offsets follow: E - D. The task reads the source from its stored position N, runs every record through the
producer's own transform (record handler, provenance header) and compares each record it would produce with the
target's record at D, D + 1, ...: key, value, headers, and the timestamp when the target keeps CreateTime. The
records found are not produced again; replication resumes after the last one. Gaps in the source (compaction,
transaction markers, aborted records under read_committed, records the handler drops) need nothing special: the
comparison pairs produced records, not offsets.

This is exact when the task is the only writer of its target partitions (the default policy's remote topics; with
the identity policy, no local producer writes to the topic) and its record handler is deterministic. Whatever
breaks that shows up as a window that does not verify: a record that differs, a target offset without a record
(another producer's transaction marker, compaction of the remote topic), or a source that ends before the window
does. The task then skips only the records verified so far, reports a ResumeMismatch, and copies the rest again:
duplicates are possible, loss is not, and nothing is skipped on a guess.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from confluent_kafka import TIMESTAMP_CREATE_TIME, KafkaError, TopicPartition

from replication.task.handlers import Headers, OutRecord

Record = Any  # a consumed Message (typed Any for the same reason as producing.Record)
Outgoing = Callable[[Record], OutRecord | None]
HINT = (
    "another producer writes to the target partition (e.g. the identity policy with local producers), the record "
    "handler is not deterministic, or a topic was recreated"
)


class Reader(Protocol):
    """The part of a confluent-kafka Consumer that verification uses (tests pass fakes)."""

    def assign(self, partitions: list[TopicPartition]) -> None: ...
    def consume(self, num_messages: int = 1, timeout: float = -1) -> list[Any]: ...
    def pause(self, partitions: list[TopicPartition]) -> None: ...
    def resume(self, partitions: list[TopicPartition]) -> None: ...


@dataclass(frozen=True)
class Window:
    """Target offsets [downstream, end) of one partition: written after the stored position `next_offset`."""

    topic: str
    partition: int
    remote_topic: str
    next_offset: int
    downstream: int
    end: int

    @property
    def size(self) -> int:
        return self.end - self.downstream


class ResumeMismatch(RuntimeError):
    """Where and why a window stopped verifying: the task copies the records from there again (never skips them)."""

    def __init__(self, window: Window, at: int, reason: str) -> None:
        super().__init__(
            f"{window.topic}-{window.partition}: target {window.remote_topic} [{window.partition}] offset {at} "
            f"(of {window.downstream}..{window.end - 1}, written after source offset {window.next_offset - 1}): "
            f"{reason}; possible causes: {HINT}"
        )
        self.window = window
        self.at = at
        self.reason = reason


@dataclass(eq=False)
class Verified:
    """The records of a window found at the target, in order from its start: source offsets, bytes, timestamps."""

    window: Window
    upstream: list[int] = field(default_factory=list)
    nbytes: int = 0
    first_timestamp: int = -1
    last_timestamp: int = -1
    mismatch: ResumeMismatch | None = None

    @property
    def count(self) -> int:
        return len(self.upstream)

    @property
    def resume_at(self) -> int:
        """The source offset to resume at: after the last record found, or the stored position."""
        return self.upstream[-1] + 1 if self.upstream else self.window.next_offset

    def add(self, offset: int, nbytes: int, timestamp: int) -> None:
        if not self.upstream:
            self.first_timestamp = timestamp
        self.upstream.append(offset)
        self.nbytes += nbytes
        self.last_timestamp = timestamp


def _bytes(data: Any) -> bytes | None:
    return data.encode() if isinstance(data, str) else data  # produce() encodes str the same way


def _headers(headers: Headers) -> list[tuple[str, bytes | None]]:
    items = headers.items() if isinstance(headers, dict) else headers or []
    return [(name, _bytes(value)) for name, value in items]


def difference(out: OutRecord, timestamp: int, record: Record) -> str | None:
    """What differs between a record the producer would send and one at the target (None: they are the same)."""
    key, value, headers = out
    if _bytes(key) != record.key():
        return "key"
    if _bytes(value) != record.value():
        return "value"
    if _headers(headers) != _headers(record.headers()):
        return "headers"
    kind, stored = record.timestamp()
    if kind == TIMESTAMP_CREATE_TIME and timestamp > 0 and stored != timestamp:
        return "timestamp"  # a LogAppendTime target sets its own: nothing to compare then
    return None


@dataclass(eq=False)
class _Progress:
    """One window being verified: records the source would produce, and target records, not yet compared."""

    result: Verified
    produced: deque[tuple[int, OutRecord, int]] = field(default_factory=deque)  # source offset, record, timestamp
    found: deque[Record] = field(default_factory=deque)
    source_ended: bool = False
    target_ended: bool = False
    done: bool = False

    @property
    def next_downstream(self) -> int:
        return self.result.window.downstream + self.result.count

    def stop(self, reason: str) -> None:
        self.result.mismatch = ResumeMismatch(self.result.window, self.next_downstream, reason)
        self.done = True

    def compare(self) -> None:
        window = self.result.window
        while self.produced and self.found and not self.done:
            offset, out, timestamp = self.produced[0]
            record, at = self.found[0], self.next_downstream
            if record.offset() != at:
                self.stop("no record there (a transaction marker of another producer, or the remote topic compacted)")
                return
            differs = difference(out, timestamp, record)
            if differs is not None:
                self.stop(f"its {differs} differs from the record source offset {offset} produces")
                return
            self.produced.popleft()
            self.found.popleft()
            self.result.add(offset, len(record), timestamp)
            self.done = self.result.count == window.size
        if self.done:
            return
        if not self.found and self.target_ended:
            self.stop(f"no record there (offsets up to {window.end - 1} hold markers or were compacted)")
        elif not self.produced and self.source_ended and self.found:
            self.stop("the source ends before a record that produces it")


class WindowVerifier:
    """Finds, for each window, how many records from its stored position on the target already holds.

    `source` reads the source as the task's consumer does (same isolation level); `target` reads the target with
    read_uncommitted; both with enable.partition.eof. Memory stays bounded: a partition's side that is ahead of the
    other by its share of `buffered` records pauses (per partition, so one side never waits for the other's paused
    partition). Whatever is not verified within `timeout` seconds is reported and copied again.
    """

    def __init__(
        self,
        source: Reader,
        target: Reader,
        outgoing: Outgoing,
        timeout: float = 120.0,
        clock: Callable[[], float] = time.monotonic,
        buffered: int = 100_000,
    ) -> None:
        self.source = source
        self.target = target
        self.outgoing = outgoing
        self.timeout = timeout
        self.clock = clock
        self.buffered = buffered

    def verify(self, windows: Sequence[Window]) -> list[Verified]:
        by_source = {(w.topic, w.partition): _Progress(Verified(w)) for w in windows}
        by_target = {(p.result.window.remote_topic, p.result.window.partition): p for p in by_source.values()}
        self.source.assign([TopicPartition(w.topic, w.partition, w.next_offset) for w in windows])
        self.target.assign([TopicPartition(w.remote_topic, w.partition, w.downstream) for w in windows])
        deadline = self.clock() + self.timeout
        waiting = list(by_source.values())
        paused: set[tuple[str, int, str]] = set()
        share = max(100, self.buffered // max(len(windows), 1))
        while waiting:
            if self.clock() > deadline:
                for progress in waiting:
                    progress.stop(f"not verified within {self.timeout:.0f} s")
                break
            self._read_target(by_target)
            self._read_source(by_source)
            for progress in waiting:
                progress.compare()
            waiting = [p for p in waiting if not p.done]
            self._throttle(by_source.values(), paused, share)
        return [p.result for p in by_source.values()]

    def _read_target(self, by_target: dict[tuple[str, int], _Progress]) -> None:
        for msg in self.target.consume(1000, 0.05):
            progress = by_target.get((msg.topic(), msg.partition()))
            if progress is None or progress.done:
                continue
            error = msg.error()
            if error is not None:
                if error.code() == KafkaError._PARTITION_EOF:
                    progress.target_ended = True
                else:
                    progress.stop(f"target: {error.str()}")
            elif msg.offset() >= progress.result.window.end:
                progress.target_ended = True  # written after the task started: not part of the window
            else:
                progress.found.append(msg)
                progress.target_ended = msg.offset() >= progress.result.window.end - 1

    def _read_source(self, by_source: dict[tuple[str, int], _Progress]) -> None:
        for msg in self.source.consume(1000, 0.05):
            progress = by_source.get((msg.topic(), msg.partition()))
            if progress is None or progress.done:
                continue
            error = msg.error()
            if error is not None:
                if error.code() == KafkaError._PARTITION_EOF:
                    progress.source_ended = True
                else:
                    progress.stop(f"source: {error.str()}")
                continue
            out = self.outgoing(msg)
            if out is not None:
                progress.produced.append((msg.offset(), out, msg.timestamp()[1]))

    def _throttle(self, progresses: Any, paused: set[tuple[str, int, str]], share: int) -> None:
        """Pause a side that is far ahead, and both sides of a finished window; resume a side that caught up."""
        for progress in progresses:
            window = progress.result.window
            sides = (
                (self.source, "source", window.topic, progress.done or len(progress.produced) >= share),
                (self.target, "target", window.remote_topic, progress.done or len(progress.found) >= share),
            )
            for reader, side, topic, pause in sides:
                key = (topic, window.partition, side)
                if pause and key not in paused:
                    reader.pause([TopicPartition(topic, window.partition)])
                    paused.add(key)
                elif not pause and key in paused:
                    reader.resume([TopicPartition(topic, window.partition)])
                    paused.discard(key)
