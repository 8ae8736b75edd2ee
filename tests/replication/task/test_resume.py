"""Resuming after a crash: the records a crashed task left at the target are found, byte for byte, and skipped;
whatever does not verify is reported and copied again, never skipped on a guess."""

from __future__ import annotations

from typing import Any

import pytest

from replication.kafka.positions import Position, decode, encode
from replication.metrics.registry import MetricsRegistry
from replication.mm2.records import PROVENANCE_HEADER
from replication.offsets.partitionstate import PartitionState
from replication.task.context import TaskContext
from replication.task.dataloss import DataLossError
from replication.task.producing import BatchProducer
from replication.task.resume import ResumeMismatch, Verified, Window, WindowVerifier, difference
from replication.task.starting import plan_start
from tests.replication.fakes import FakeClients, FakeMessage, FakeReader, flow

REMOTE = "us-west.orders"


def _source(offsets: list[int], partition: int = 0) -> list[FakeMessage]:
    """Source records at these offsets (gaps are compaction holes, markers, aborted records)."""
    return [
        FakeMessage("orders", partition, o, f"v{o}".encode(), f"k{o}".encode(), [("h", b"1")], 1000 + o)
        for o in offsets
    ]


def _copies(records: list[FakeMessage], first_downstream: int, partition: int = 0) -> list[FakeMessage]:
    """What the producer wrote for these source records: the same bytes, at consecutive target offsets."""
    return [
        FakeMessage(REMOTE, partition, first_downstream + i, m.value(), m.key(), m.headers(), m.timestamp()[1])
        for i, m in enumerate(records)
    ]


def _drop_every_third(msg: Any) -> tuple[bytes | None, bytes | None, Any] | None:
    return None if msg.offset() % 3 == 0 else (msg.key(), msg.value(), msg.headers())


def _verify(
    source: list[FakeMessage], target: list[FakeMessage], window: Window, outgoing: Any = None, **kwargs: Any
) -> Verified:
    out = outgoing or (lambda m: (m.key(), m.value(), m.headers()))
    reader = FakeReader({("orders", window.partition): source})
    written = FakeReader({(REMOTE, window.partition): target}, {(REMOTE, window.partition): window.end})
    (result,) = WindowVerifier(reader, written, out, **kwargs).verify([window])
    return result


def test_records_past_the_stored_position_are_skipped_exactly_across_source_gaps_and_dropped_records() -> None:
    source = _source([0, 1, 2, 5, 6, 7, 8, 10, 11, 12, 13, 14, 17])
    produced = [m for m in source if _drop_every_third(m) is not None]  # 1 2 5 7 8 10 11 13 14 17
    # Stored: next source offset 2, downstream 1 (offset 1 copied to 0). The crashed task then wrote 5 more records.
    target = _copies(produced, 0)[:6]
    window = Window("orders", 0, REMOTE, next_offset=2, downstream=1, end=6)
    result = _verify(source, target, window, _drop_every_third)
    assert result.mismatch is None
    assert result.upstream == [2, 5, 7, 8, 10]
    assert result.resume_at == 11  # 12 (dropped) is read again and dropped again
    assert (result.first_timestamp, result.last_timestamp) == (1002, 1010)


def test_another_producers_record_in_the_window_stops_the_skip_there_and_is_reported() -> None:
    source = _source(list(range(10)))
    ours = _copies(source[:5], 0)
    foreign = FakeMessage(REMOTE, 0, 2, b"written by someone else", b"k2", [("h", b"1")], 1002)
    target = [ours[0], ours[1], foreign] + [_copies([m], 3 + i)[0] for i, m in enumerate(source[2:4])]
    window = Window("orders", 0, REMOTE, next_offset=0, downstream=0, end=5)
    result = _verify(source, target, window)
    assert result.upstream == [0, 1]  # only what verified: offsets 2.. are copied again (duplicates, never loss)
    assert result.resume_at == 2
    assert isinstance(result.mismatch, ResumeMismatch)
    assert result.mismatch.at == 2
    assert "value differs" in str(result.mismatch) and "another producer" in str(result.mismatch)


def test_a_non_deterministic_handler_is_reported_not_trusted() -> None:
    source = _source(list(range(4)))
    target = _copies(source, 0)
    window = Window("orders", 0, REMOTE, next_offset=0, downstream=0, end=4)
    result = _verify(source, target, window, lambda m: (m.key(), m.value() + b"!", m.headers()))
    assert result.count == 0 and result.resume_at == 0
    assert result.mismatch is not None and result.mismatch.reason.startswith("its value differs")


def test_a_record_another_producer_appended_after_ours_is_reported_as_the_source_ending_first() -> None:
    source = _source([0, 1])
    target = [*_copies(source, 10), FakeMessage(REMOTE, 0, 12, b"x", b"k", None, 5)]
    window = Window("orders", 0, REMOTE, next_offset=0, downstream=10, end=13)
    result = _verify(source, target, window)
    assert result.upstream == [0, 1]
    assert result.mismatch is not None and "source ends" in result.mismatch.reason


def test_a_target_offset_without_a_record_stops_the_skip() -> None:
    source = _source(list(range(4)))
    copies = _copies(source, 0)
    target = [copies[0], *_copies(source[1:3], 2)]  # offset 1 is another producer's transaction marker
    window = Window("orders", 0, REMOTE, next_offset=0, downstream=0, end=4)
    result = _verify(source, target, window)
    assert result.upstream == [0]
    assert result.mismatch is not None and result.mismatch.at == 1 and "no record there" in result.mismatch.reason


def test_a_window_that_holds_only_markers_at_its_end_is_reported() -> None:
    source = _source(list(range(4)))
    target = _copies(source[:2], 0)
    window = Window("orders", 0, REMOTE, next_offset=0, downstream=0, end=3)  # offset 2: a marker
    result = _verify(source, target, window)
    assert result.upstream == [0, 1]
    assert result.mismatch is not None and result.mismatch.at == 2


def test_a_window_not_verified_in_time_copies_everything_again() -> None:
    ticks = iter(range(0, 1000, 10))
    source = _source(list(range(4)))
    window = Window("orders", 0, REMOTE, next_offset=0, downstream=0, end=4)
    reader, written = FakeReader({("orders", 0): source}), FakeReader(silent=True)
    out = lambda m: (m.key(), m.value(), m.headers())  # noqa: E731
    (result,) = WindowVerifier(reader, written, out, timeout=30, clock=lambda: next(ticks)).verify([window])
    assert result.count == 0 and result.resume_at == 0
    assert result.mismatch is not None and "within 30 s" in result.mismatch.reason


def test_many_windows_verify_together_and_a_side_far_ahead_waits() -> None:
    sources = {p: _source(list(range(0, 6000, 2)), p) for p in range(3)}
    logs = {("orders", p): s for p, s in sources.items()}
    targets = {(REMOTE, p): _copies(s[10:2510], 50, p) for p, s in sources.items()}
    windows = [Window("orders", p, REMOTE, next_offset=20, downstream=50, end=2550) for p in range(3)]
    out = lambda m: (m.key(), m.value(), m.headers())  # noqa: E731
    source, target = FakeReader(logs), FakeReader(targets, limit=10)  # the target is slow
    resumed: list[Any] = []
    source_resume = source.resume
    source.resume = lambda tps: (resumed.append(tps), source_resume(tps))  # type: ignore[method-assign]
    results = WindowVerifier(source, target, out, buffered=300).verify(windows)  # 100 records per partition
    for result in results:
        assert result.mismatch is None
        assert result.upstream == list(range(20, 5020, 2))
    assert resumed  # the source was paused while the target caught up, and resumed


def test_difference_compares_key_value_headers_and_create_time_only() -> None:
    record = FakeMessage(REMOTE, 0, 0, b"v", b"k", [("h", b"1")], 7)
    assert difference((b"k", b"v", [("h", b"1")]), 7, record) is None
    assert difference(("k", "v", {"h": "1"}), 7, record) is None  # produce() encodes str the same way
    assert difference((b"k2", b"v", [("h", b"1")]), 7, record) == "key"
    assert difference((b"k", b"v", None), 7, record) == "headers"
    assert difference((b"k", b"v", [("h", b"1")]), 8, record) == "timestamp"
    log_append_time = FakeMessage(REMOTE, 0, 0, b"v", b"k", [("h", b"1")], 99)
    log_append_time.timestamp = lambda: (2, 99)  # type: ignore[method-assign]
    assert difference((b"k", b"v", [("h", b"1")]), 7, log_append_time) is None


# -- where a partition starts ---------------------------------------------------------------------------------
def _plan(stored: Position | None, end: int | None, start: int | None = None, **flow_overrides: Any) -> Any:
    offset = start if start is not None else (stored.next_offset if stored else 0)
    return plan_start(flow(**flow_overrides), "orders", 0, REMOTE, stored, offset, 0, end)


def test_a_target_ending_at_the_stored_downstream_offset_resumes_at_the_stored_position() -> None:
    plan = _plan(Position(500, 900, 480, REMOTE), 480)
    assert (plan.offset, plan.window, plan.loss, plan.note) == (500, None, None, None)


def test_records_written_after_the_stored_position_make_a_window_to_verify() -> None:
    plan = _plan(Position(500, 900, 480, REMOTE), 530)
    assert plan.offset == 500
    assert plan.window == Window("orders", 0, REMOTE, 500, 480, 530)


def test_a_target_that_ends_before_the_stored_downstream_offset_lost_records() -> None:
    plan = _plan(Position(500, 900, 480, REMOTE), 470)
    assert isinstance(plan.loss, DataLossError)
    assert plan.loss.lost == 10 and plan.loss.resume_at == 500
    assert "gone from the target" in plan.loss.reason


def test_an_empty_remote_topic_after_replication_is_replicated_again_from_the_source_log_start() -> None:
    assert _plan(Position(500, 900, 480, REMOTE), 0).recreated
    assert _plan(Position(500, 900), 0).recreated  # without a downstream offset, as before
    assert not _plan(Position(500, 900, 0, REMOTE), 0).recreated  # the handler dropped everything: nothing was written


def test_positions_of_older_versions_resume_as_before_and_say_so() -> None:
    plan = _plan(Position(500, 900), 530)
    assert plan.offset == 500 and plan.window is None
    assert plan.note is not None and "older version" in plan.note


def test_exactly_once_and_moved_starts_verify_nothing() -> None:
    assert _plan(Position(500, 900, 480, REMOTE), 530, exactly_once=True).window is None
    assert _plan(Position(500, 900, 480, REMOTE), 530, start=600).window is None  # a source data loss moved the start
    assert _plan(None, 530).window is None


# -- what is stored ---------------------------------------------------------------------------------------------
def test_position_records_carry_the_downstream_offset_and_old_records_still_decode() -> None:
    key, value = encode(("orders", 3), Position(10, 20, 7, REMOTE))
    assert decode(key, value) == (("orders", 3), Position(10, 20, 7, REMOTE))
    assert decode(b'["orders", 3]', b'{"next": 10, "hw": 20}') == (("orders", 3), Position(10, 20, None))
    assert b"down" not in encode(("orders", 3), Position(10, 20))[1]
    assert decode(key, b'{"next": 10, "hw": 20, "down": 7}')[1] == Position(10, 20)  # no topic: not usable


def test_a_position_stored_for_another_remote_topic_is_never_compared_with_this_one() -> None:
    # One source and target, two replication policies (one flow changed its policy, or another flow of the same
    # clusters): the positions topic's key names the source partition only. The identity policy's target topic
    # holds more records (local producers write there too), so its downstream offset lies beyond this end offset.
    stored = Position(500, 900, 2480, "orders")
    plan = _plan(stored, 470)
    assert (plan.offset, plan.window, plan.loss) == (500, None, None)
    assert plan.note is not None and "position stored for target topic orders" in plan.note
    assert _plan(Position(500, 900, 480, "orders"), 530).window is None  # nothing verified against another topic
    assert _plan(Position(500, 900, 480, "orders"), 0).recreated  # an empty remote topic is still re-replicated


def test_the_stored_downstream_offset_follows_the_last_acknowledged_record() -> None:
    state = PartitionState("orders", 0, REMOTE, acked_next=0, stored_next=0)
    assert state.downstream_next() is None
    state.downstream_start = 40
    assert state.downstream_next() == 40
    state.run_acked(5, 44)
    assert state.downstream_next() == 45


class _Handler:
    def handle(self, msg: Any) -> tuple[bytes | None, bytes | None, Any] | None:
        return _drop_every_third(msg)


@pytest.mark.parametrize("policy", ["DefaultReplicationPolicy", "IdentityReplicationPolicy"])
@pytest.mark.parametrize("handler", [None, _Handler()], ids=["no-handler", "handler"])
def test_resume_sees_exactly_what_the_producer_sends(policy: str, handler: Any) -> None:
    clients = FakeClients()
    producer = BatchProducer(TaskContext.create(flow(replication_policy_class=policy), 0, MetricsRegistry(), clients))  # type: ignore[arg-type]
    remote = "orders" if policy.startswith("Identity") else REMOTE
    states = {("orders", 0): PartitionState("orders", 0, remote, acked_next=0, stored_next=0)}
    msgs = _source(list(range(9)))
    msgs[4] = FakeMessage("orders", 0, 4, b"echo", b"k", [(PROVENANCE_HEADER, b"us-east")])
    producer.replicate(msgs, states, handler, lambda m: None)  # type: ignore[arg-type]
    sent = [(p.key, p.value, p.headers) for p in clients.producer_instance.produced]
    assert sent == [out for m in msgs if (out := producer.outgoing(m, handler)) is not None]
