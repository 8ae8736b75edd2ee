"""MirrorMaker 2's internal records (heartbeat, checkpoint, offset sync), byte-exact with MM2, and provenance headers.

MM2 writes these with Kafka's protocol-type encoding: big-endian fixed-width integers, and a STRING is an INT16
length followed by that many UTF-8 bytes. Writing the same bytes lets MM2 tooling read our internal topics and
lets Mirrorplane read topics MM2 left behind. Decoding refuses anything malformed rather than guessing.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import ClassVar, Self

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
_INT64 = struct.Struct(">q")
_TWO_INT64 = struct.Struct(">qq")
_HEARTBEAT_VALUE = struct.Struct(">hq")
_CHECKPOINT_OFFSETS = struct.Struct(">hqq")  # followed by the metadata STRING
_MAX_STRING_BYTES = 32767  # an INT16 length; -1 would mean a null STRING, which MM2 never writes here

PROVENANCE_HEADER = "mirrorplane.provenance"
_PROVENANCE_SEPARATOR = b","


class RecordFormatError(ValueError):
    """Bytes that are not a well-formed MM2 record of the expected kind, or a field that cannot be encoded."""


def _string(what: str, text: str) -> bytes:
    data = text.encode()
    if len(data) > _MAX_STRING_BYTES:
        raise RecordFormatError(f"{what}: {len(data)} UTF-8 bytes; a STRING holds at most {_MAX_STRING_BYTES}")
    return _INT16.pack(len(data)) + data


def _pack(what: str, layout: struct.Struct, *values: int) -> bytes:
    try:
        return layout.pack(*values)
    except struct.error as exc:  # out of range or not an integer: name the record, not just the format code
        raise RecordFormatError(f"{what}: cannot encode {values!r}: {exc}") from None


class _Reader:
    """A cursor over one serialised key or value; every read checks that the bytes are there."""

    __slots__ = ("_data", "_pos", "_what")

    def __init__(self, what: str, data: bytes | None) -> None:
        if data is None:
            raise RecordFormatError(f"{what}: missing (null)")
        self._what = what
        self._data = data
        self._pos = 0

    def _need(self, size: int, name: str) -> None:
        left = len(self._data) - self._pos
        if size > left:
            raise RecordFormatError(
                f"{self._what}: truncated at {name}: needs {size} bytes at offset {self._pos}, {left} left"
            )

    def unpack(self, layout: struct.Struct, name: str) -> tuple[int, ...]:
        self._need(layout.size, name)
        values: tuple[int, ...] = layout.unpack_from(self._data, self._pos)
        self._pos += layout.size
        return values

    def int32(self, name: str) -> int:
        return self.unpack(_INT32, name)[0]

    def string(self, name: str) -> str:
        length = self.unpack(_INT16, name)[0]
        if length < 0:
            raise RecordFormatError(f"{self._what}: {name} has length {length}; a null STRING is not allowed")
        self._need(length, name)
        raw = self._data[self._pos : self._pos + length]
        self._pos += length
        try:
            return raw.decode()
        except UnicodeDecodeError as exc:
            raise RecordFormatError(f"{self._what}: {name} is not UTF-8: {exc}") from None

    def version(self, expected: int) -> None:
        version = self.unpack(_INT16, "version")[0]
        if version != expected:
            raise RecordFormatError(f"{self._what}: unknown version {version}; only {expected} is known")

    def end(self) -> None:
        left = len(self._data) - self._pos
        if left:
            raise RecordFormatError(f"{self._what}: {left} trailing bytes after offset {self._pos}")


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """A heartbeat: the source cluster's clock (epoch ms) as seen through one flow into the target cluster."""

    VERSION: ClassVar[int] = 0

    source_cluster_alias: str
    target_cluster_alias: str
    timestamp: int

    def key_bytes(self) -> bytes:
        return _string("heartbeat source alias", self.source_cluster_alias) + _string(
            "heartbeat target alias", self.target_cluster_alias
        )

    def value_bytes(self) -> bytes:
        return _pack("heartbeat value", _HEARTBEAT_VALUE, self.VERSION, self.timestamp)

    def to_bytes(self) -> tuple[bytes, bytes]:
        return self.key_bytes(), self.value_bytes()

    @classmethod
    def from_bytes(cls, key: bytes | None, value: bytes | None) -> Self:
        k = _Reader("heartbeat key", key)
        source, target = k.string("sourceClusterAlias"), k.string("targetClusterAlias")
        k.end()
        v = _Reader("heartbeat value", value)
        v.version(cls.VERSION)
        timestamp = v.unpack(_INT64, "timestamp")[0]
        v.end()
        return cls(source, target, timestamp)


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """A consumer group's position translated across a flow: resume at `downstream_offset` in the remote topic.

    `topic` is the remote topic name (e.g. `us-west.orders`). `upstream_offset` is the group's committed offset in
    the source, i.e. the next record to read. `timestamp` is the Kafka record timestamp when one was read; it is
    not part of the serialised record, nor of equality.
    """

    VERSION: ClassVar[int] = 0

    consumer_group_id: str
    topic: str
    partition: int
    upstream_offset: int
    downstream_offset: int
    metadata: str = ""
    timestamp: int | None = field(default=None, compare=False)

    def key_bytes(self) -> bytes:
        group = _string("checkpoint group", self.consumer_group_id)
        topic = _string("checkpoint topic", self.topic)
        return group + topic + _pack("checkpoint partition", _INT32, self.partition)

    def value_bytes(self) -> bytes:
        offsets = _pack(
            "checkpoint offsets", _CHECKPOINT_OFFSETS, self.VERSION, self.upstream_offset, self.downstream_offset
        )
        return offsets + _string("checkpoint metadata", self.metadata)

    def to_bytes(self) -> tuple[bytes, bytes]:
        return self.key_bytes(), self.value_bytes()

    @classmethod
    def from_bytes(cls, key: bytes | None, value: bytes | None, timestamp: int | None = None) -> Self:
        k = _Reader("checkpoint key", key)
        group, topic, partition = k.string("group"), k.string("topic"), k.int32("partition")
        k.end()
        v = _Reader("checkpoint value", value)
        v.version(cls.VERSION)
        upstream, downstream = v.unpack(_TWO_INT64, "upstreamOffset and offset")
        metadata = v.string("metadata")
        v.end()
        return cls(group, topic, partition, upstream, downstream, metadata, timestamp)


LatestCheckpoints = dict[str, dict[tuple[str, int], Checkpoint]]  # group -> (remote topic, partition) -> checkpoint


def latest_checkpoints(checkpoints: Iterable[Checkpoint], latest: LatestCheckpoints | None = None) -> LatestCheckpoints:
    """The newest checkpoint per group and (remote topic, partition) of checkpoints read oldest first, as the
    compacted checkpoints topic keeps them: the last one wins. Given `latest` (an incremental read), updates it."""
    result: LatestCheckpoints = {} if latest is None else latest
    for cp in checkpoints:
        result.setdefault(cp.consumer_group_id, {})[(cp.topic, cp.partition)] = cp
    return result


@dataclass(frozen=True, slots=True)
class OffsetSync:
    """A pairing of an upstream offset in a source topic-partition with the downstream offset of the same record.

    `topic` is the source topic name (e.g. `orders`). Unlike the other records, the value has no version prefix.
    """

    topic: str
    partition: int
    upstream_offset: int
    downstream_offset: int

    def key_bytes(self) -> bytes:
        return _string("offset sync topic", self.topic) + _pack("offset sync partition", _INT32, self.partition)

    def value_bytes(self) -> bytes:
        return _pack("offset sync value", _TWO_INT64, self.upstream_offset, self.downstream_offset)

    def to_bytes(self) -> tuple[bytes, bytes]:
        return self.key_bytes(), self.value_bytes()

    @classmethod
    def from_bytes(cls, key: bytes | None, value: bytes | None) -> Self:
        k = _Reader("offset sync key", key)
        topic, partition = k.string("topic"), k.int32("partition")
        k.end()
        v = _Reader("offset sync value", value)
        upstream, downstream = v.unpack(_TWO_INT64, "upstreamOffset and offset")
        v.end()
        return cls(topic, partition, upstream, downstream)


# -- provenance ---------------------------------------------------------------------------------------------
# Under the identity policy topic names carry no history, so each record carries the aliases of the clusters it
# has passed through: header `mirrorplane.provenance`, value `us-west,us-east` (UTF-8, oldest first).
# These run once per record in identity mode: no regex, one new list, and a substring scan before any split.


def provenance_add(headers: list[tuple[str, bytes]] | None, alias: str) -> list[tuple[str, bytes]]:
    """A new header list with alias appended to the provenance header (added at the end if there is none).

    Every other header is kept, in order. If a record somehow has several provenance headers, the first grows.
    """
    if not alias or "," in alias:
        raise ValueError(f"provenance alias {alias!r} must be non-empty and contain no ','")
    encoded = alias.encode()
    if not headers:
        return [(PROVENANCE_HEADER, encoded)]
    result = list(headers)
    for index, (name, value) in enumerate(result):
        if name == PROVENANCE_HEADER:
            result[index] = (name, value + _PROVENANCE_SEPARATOR + encoded if value else encoded)
            return result
    result.append((PROVENANCE_HEADER, encoded))
    return result


def provenance_contains(headers: list[tuple[str, bytes]] | None, alias: str) -> bool:
    """True if any provenance header lists alias, i.e. the record has already been in that cluster."""
    if not headers:
        return False
    encoded = alias.encode()
    for name, value in headers:
        # The substring test rejects the common case without allocating; split only to rule out `us-west-2`.
        if name == PROVENANCE_HEADER and value and encoded in value and encoded in value.split(_PROVENANCE_SEPARATOR):
            return True
    return False
