from __future__ import annotations

import pytest

from replication.mm2.records import (
    PROVENANCE_HEADER,
    Checkpoint,
    Heartbeat,
    OffsetSync,
    RecordFormatError,
    provenance_add,
    provenance_contains,
)

# Golden vectors, exactly as in the MM2 record-format reference.
HEARTBEAT = Heartbeat("us-west", "us-east", 1700000000000)
HEARTBEAT_KEY = "000775732d77657374000775732d65617374"
HEARTBEAT_VALUE = "00000000018bcfe56800"
CHECKPOINT = Checkpoint("orders-app", "us-west.orders", 3, 1500, 1498, "")
CHECKPOINT_KEY = "000a6f72646572732d617070000e75732d776573742e6f726465727300000003"
CHECKPOINT_VALUE = "000000000000000005dc00000000000005da0000"
OFFSET_SYNC = OffsetSync("orders", 3, 1500, 1498)
OFFSET_SYNC_KEY = "00066f726465727300000003"
OFFSET_SYNC_VALUE = "00000000000005dc00000000000005da"

GOLDEN = [
    pytest.param(HEARTBEAT, HEARTBEAT_KEY, HEARTBEAT_VALUE, id="heartbeat"),
    pytest.param(CHECKPOINT, CHECKPOINT_KEY, CHECKPOINT_VALUE, id="checkpoint"),
    pytest.param(OFFSET_SYNC, OFFSET_SYNC_KEY, OFFSET_SYNC_VALUE, id="offset-sync"),
]
Record = Heartbeat | Checkpoint | OffsetSync


@pytest.mark.parametrize(("record", "key", "value"), GOLDEN)
def test_records_serialise_to_the_mm2_golden_bytes(record: Record, key: str, value: str) -> None:
    assert record.key_bytes().hex() == key
    assert record.value_bytes().hex() == value
    assert record.to_bytes() == (bytes.fromhex(key), bytes.fromhex(value))


@pytest.mark.parametrize(("record", "key", "value"), GOLDEN)
def test_records_parse_from_the_mm2_golden_bytes(record: Record, key: str, value: str) -> None:
    assert type(record).from_bytes(bytes.fromhex(key), bytes.fromhex(value)) == record


ROUND_TRIPS = [
    Heartbeat("a", "b", 0),
    Heartbeat("", "", -1),
    Heartbeat("us-west", "us-east", 2**63 - 1),
    Heartbeat("ü-ß", "東京", -(2**63)),
    Heartbeat("x" * 32767, "y", 1),
    Checkpoint("g", "t", 0, 0, 0),
    Checkpoint("orders-app", "us-west.orders", 2**31 - 1, 2**63 - 1, 2**63 - 2, "meta"),
    Checkpoint("grüppe", "a.b.c", -1, -1, -1, "ünïcode ✓"),
    Checkpoint("g" * 1000, "t" * 249, 7, 10, 9, "m" * 32767),
    OffsetSync("t", 0, 0, 0),
    OffsetSync("orders", -(2**31), -(2**63), 2**63 - 1),
    OffsetSync("топик", 12, 5, 3),
]


@pytest.mark.parametrize("record", ROUND_TRIPS, ids=lambda r: type(r).__name__)
def test_records_round_trip_through_bytes(record: Record) -> None:
    key, value = record.to_bytes()
    assert type(record).from_bytes(key, value) == record


def test_checkpoint_timestamp_is_carried_but_neither_serialised_nor_compared() -> None:
    stamped = Checkpoint("orders-app", "us-west.orders", 3, 1500, 1498, timestamp=1700000000000)
    assert stamped == CHECKPOINT
    assert stamped.to_bytes() == CHECKPOINT.to_bytes()
    parsed = Checkpoint.from_bytes(*CHECKPOINT.to_bytes(), timestamp=42)
    assert parsed.timestamp == 42
    assert Checkpoint.from_bytes(*CHECKPOINT.to_bytes()).timestamp is None


def test_records_are_frozen() -> None:
    with pytest.raises(AttributeError):
        OFFSET_SYNC.partition = 4  # type: ignore[misc]


def _hex(value: str) -> bytes:
    return bytes.fromhex(value)


MALFORMED = [
    # (record type, key, value, words the error must contain)
    pytest.param(Heartbeat, b"", _hex(HEARTBEAT_VALUE), "truncated at sourceClusterAlias", id="hb-empty-key"),
    pytest.param(Heartbeat, _hex(HEARTBEAT_KEY)[:-1], _hex(HEARTBEAT_VALUE), "truncated", id="hb-short-key"),
    pytest.param(Heartbeat, _hex(HEARTBEAT_KEY) + b"\0", _hex(HEARTBEAT_VALUE), "1 trailing bytes", id="hb-key-tail"),
    pytest.param(Heartbeat, _hex(HEARTBEAT_KEY), b"", "truncated at version", id="hb-empty-value"),
    pytest.param(Heartbeat, _hex(HEARTBEAT_KEY), _hex(HEARTBEAT_VALUE)[:-1], "truncated at timestamp", id="hb-short"),
    pytest.param(Heartbeat, _hex(HEARTBEAT_KEY), _hex("0001" + HEARTBEAT_VALUE[4:]), "unknown version 1", id="hb-v1"),
    pytest.param(Heartbeat, _hex(HEARTBEAT_KEY), _hex(HEARTBEAT_VALUE + "00"), "trailing", id="hb-value-tail"),
    pytest.param(Heartbeat, None, _hex(HEARTBEAT_VALUE), "heartbeat key: missing", id="hb-null-key"),
    pytest.param(Heartbeat, _hex(HEARTBEAT_KEY), None, "heartbeat value: missing", id="hb-null-value"),
    pytest.param(Heartbeat, _hex("ffff"), _hex(HEARTBEAT_VALUE), "null STRING", id="hb-null-string"),
    pytest.param(Heartbeat, _hex("0001ff0001ff"), _hex(HEARTBEAT_VALUE), "not UTF-8", id="hb-bad-utf8"),
    pytest.param(Checkpoint, _hex(CHECKPOINT_KEY)[:-2], _hex(CHECKPOINT_VALUE), "truncated at partition", id="cp-k"),
    pytest.param(Checkpoint, _hex(CHECKPOINT_KEY + "00"), _hex(CHECKPOINT_VALUE), "trailing", id="cp-key-tail"),
    pytest.param(Checkpoint, _hex(CHECKPOINT_KEY), _hex(CHECKPOINT_VALUE)[:-2], "truncated at metadata", id="cp-meta"),
    pytest.param(Checkpoint, _hex(CHECKPOINT_KEY), _hex(CHECKPOINT_VALUE)[:10], "truncated at upstream", id="cp-offs"),
    pytest.param(Checkpoint, _hex(CHECKPOINT_KEY), _hex("7fff" + CHECKPOINT_VALUE[4:]), "unknown version", id="cp-v"),
    pytest.param(Checkpoint, _hex(CHECKPOINT_KEY), _hex(CHECKPOINT_VALUE + "ab"), "1 trailing", id="cp-value-tail"),
    pytest.param(Checkpoint, _hex(CHECKPOINT_KEY), _hex(CHECKPOINT_VALUE[:-4] + "0005ab"), "truncated", id="cp-m"),
    # An offset sync's value has no version: a checkpoint value is two bytes too long, not a version to accept.
    pytest.param(OffsetSync, _hex(OFFSET_SYNC_KEY), _hex(CHECKPOINT_VALUE), "trailing", id="os-cp-value"),
    pytest.param(OffsetSync, _hex(OFFSET_SYNC_KEY), _hex(OFFSET_SYNC_VALUE)[:-1], "truncated", id="os-short"),
    pytest.param(OffsetSync, _hex(OFFSET_SYNC_KEY)[:-1], _hex(OFFSET_SYNC_VALUE), "truncated", id="os-short-key"),
    pytest.param(OffsetSync, _hex(OFFSET_SYNC_KEY + "00"), _hex(OFFSET_SYNC_VALUE), "trailing", id="os-key-tail"),
    pytest.param(OffsetSync, _hex("0010") + b"orders", _hex(OFFSET_SYNC_VALUE), "truncated at topic", id="os-len"),
]


@pytest.mark.parametrize(("kind", "key", "value", "words"), MALFORMED)
def test_malformed_bytes_are_refused_with_a_reason(
    kind: type[Record], key: bytes | None, value: bytes | None, words: str
) -> None:
    with pytest.raises(RecordFormatError, match=words):
        kind.from_bytes(key, value)


def test_record_format_error_is_a_value_error() -> None:
    assert issubclass(RecordFormatError, ValueError)


@pytest.mark.parametrize(
    ("record", "words"),
    [
        pytest.param(Heartbeat("x" * 32768, "b", 0), "at most 32767", id="long-string"),
        pytest.param(Heartbeat("a", "b", 2**63), "heartbeat value", id="timestamp-overflow"),
        pytest.param(Checkpoint("g", "t", 2**31, 0, 0), "checkpoint partition", id="partition-overflow"),
        pytest.param(OffsetSync("t", 0, -(2**63) - 1, 0), "offset sync value", id="offset-underflow"),
    ],
)
def test_fields_that_do_not_fit_the_format_are_refused(record: Record, words: str) -> None:
    with pytest.raises(RecordFormatError, match=words):
        record.to_bytes()


# -- provenance ---------------------------------------------------------------------------------------------


def test_provenance_is_added_as_a_new_last_header() -> None:
    headers = [("trace", b"abc"), ("empty", b"")]
    assert provenance_add(headers, "us-west") == [("trace", b"abc"), ("empty", b""), (PROVENANCE_HEADER, b"us-west")]
    assert headers == [("trace", b"abc"), ("empty", b"")], "the input list is not modified"


@pytest.mark.parametrize("headers", [None, []])
def test_provenance_starts_a_header_list_when_there_is_none(headers: list[tuple[str, bytes]] | None) -> None:
    assert provenance_add(headers, "us-west") == [(PROVENANCE_HEADER, b"us-west")]


def test_provenance_appends_to_the_existing_header_in_place() -> None:
    headers = [("a", b"1"), (PROVENANCE_HEADER, b"us-west"), ("b", b"2")]
    once = provenance_add(headers, "us-east")
    twice = provenance_add(once, "backup")
    assert once == [("a", b"1"), (PROVENANCE_HEADER, b"us-west,us-east"), ("b", b"2")]
    assert twice == [("a", b"1"), (PROVENANCE_HEADER, b"us-west,us-east,backup"), ("b", b"2")]
    assert headers[1] == (PROVENANCE_HEADER, b"us-west")


def test_provenance_replaces_an_empty_header_value() -> None:
    assert provenance_add([(PROVENANCE_HEADER, b"")], "us-west") == [(PROVENANCE_HEADER, b"us-west")]


@pytest.mark.parametrize("alias", ["", "a,b"])
def test_provenance_refuses_aliases_it_could_not_read_back(alias: str) -> None:
    with pytest.raises(ValueError, match="provenance alias"):
        provenance_add(None, alias)


@pytest.mark.parametrize(
    ("value", "alias", "expected"),
    [
        (b"us-west", "us-west", True),
        (b"us-west,us-east", "us-east", True),
        (b"us-west,us-east,backup", "us-east", True),
        (b"us-west-2", "us-west", False),
        (b"us-west-2,eu", "us-west", False),
        (b"xus-west", "us-west", False),
        (b"us-east", "us-west", False),
        (b"", "us-west", False),
    ],
)
def test_provenance_contains_matches_whole_aliases_only(value: bytes, alias: str, expected: bool) -> None:
    assert provenance_contains([("other", b"us-west"), (PROVENANCE_HEADER, value)], alias) is expected


def test_provenance_contains_ignores_other_headers_and_missing_headers() -> None:
    assert provenance_contains(None, "us-west") is False
    assert provenance_contains([], "us-west") is False
    assert provenance_contains([("origin", b"us-west")], "us-west") is False


def test_provenance_contains_checks_every_provenance_header() -> None:
    headers = [(PROVENANCE_HEADER, b"a"), (PROVENANCE_HEADER, b"b")]
    assert provenance_contains(headers, "b") is True


def test_provenance_round_trip_detects_the_cycle() -> None:
    headers = provenance_add(provenance_add([("k", b"v")], "us-west"), "us-east")
    assert provenance_contains(headers, "us-west")
    assert provenance_contains(headers, "us-east")
    assert not provenance_contains(headers, "backup")
