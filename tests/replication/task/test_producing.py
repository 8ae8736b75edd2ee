"""The hot path's bookkeeping: positions move only after acknowledgements, and runs record exact offsets."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import KafkaError

from replication.errors import AclRefusedError, ReplicationError
from replication.metrics.registry import MetricsRegistry
from replication.mm2.records import PROVENANCE_HEADER
from replication.offsets.partitionstate import PartitionState, Run
from replication.task.context import TaskContext
from replication.task.producing import BatchProducer
from tests.replication.fakes import FakeClients, FakeMessage, FakeProducer, flow


def _setup(
    on_run_acked: Callable[[Run, int], None] | None = None, **overrides: Any
) -> tuple[BatchProducer, FakeProducer, dict[tuple[str, int], PartitionState]]:
    clients = FakeClients()
    config = flow(**overrides)
    acked = on_run_acked or (lambda run, downstream: None)
    producer = BatchProducer(TaskContext.create(config, 0, MetricsRegistry(), clients), acked)  # type: ignore[arg-type]
    remote = "orders" if overrides.get("replication_policy_class") else "us-west.orders"
    states = {("orders", p): PartitionState("orders", p, remote, acked_next=0, stored_next=0) for p in range(2)}
    return producer, clients.producer_instance, states


def _no_error(msg: Any) -> None:
    raise AssertionError(f"unexpected consumer error {msg}")


def test_records_are_copied_unchanged_with_one_callback_per_run() -> None:
    producer, fake, states = _setup()
    msgs = [
        FakeMessage("orders", 0, 0, b"a", b"k0", [("h", b"1")], 111),
        FakeMessage("orders", 0, 1, b"b", b"k1"),
        FakeMessage("orders", 1, 0, b"c"),
        FakeMessage("orders", 0, 2, b"d"),
    ]
    producer.replicate(msgs, states, None, _no_error)  # type: ignore[arg-type]
    assert [(p.topic, p.partition, p.value, p.key) for p in fake.produced] == [
        ("us-west.orders", 0, b"a", b"k0"),
        ("us-west.orders", 0, b"b", b"k1"),
        ("us-west.orders", 1, b"c", b"k"),
        ("us-west.orders", 0, b"d", b"k"),
    ]
    assert fake.produced[0].headers == [("h", b"1")] and fake.produced[0].timestamp == 111
    assert [p.callback is not None for p in fake.produced] == [False, True, True, True]


def test_positions_do_not_move_before_the_target_acknowledges() -> None:
    producer, fake, states = _setup()
    producer.replicate([FakeMessage("orders", 0, i) for i in range(5)], states, None, _no_error)  # type: ignore[arg-type]
    assert states[("orders", 0)].acked_next == 0
    assert states[("orders", 0)].inflight == 1
    fake.deliver_all()
    assert states[("orders", 0)].acked_next == 5
    assert states[("orders", 0)].inflight == 0
    assert states[("orders", 0)].last_downstream == 4


def test_a_failed_send_stops_the_task_and_names_the_offsets() -> None:
    producer, fake, states = _setup()
    producer.replicate([FakeMessage("orders", 1, i) for i in range(3, 6)], states, None, _no_error)  # type: ignore[arg-type]
    fake.deliver_all(KafkaError(KafkaError.MSG_SIZE_TOO_LARGE))
    assert states[("orders", 1)].acked_next == 0
    with pytest.raises(ReplicationError, match=r"us-west.orders \[1\].*3\.\.5"):
        producer.raise_if_failed()


def test_runs_with_gaps_keep_their_exact_upstream_offsets() -> None:
    acked: list[tuple[Run, int]] = []
    producer, fake, states = _setup(lambda run, downstream: acked.append((run, downstream)))
    msgs = [FakeMessage("orders", 0, o) for o in (0, 1, 5, 6)] + [FakeMessage("orders", 1, o) for o in (7, 8)]
    producer.replicate(msgs, states, None, _no_error)  # type: ignore[arg-type]
    fake.deliver_all()
    (gappy, d0), (plain, d1) = acked
    assert (gappy.first_offset, gappy.last_offset, gappy.count, gappy.upstream, d0) == (0, 6, 4, [0, 1, 5, 6], 3)
    assert (plain.first_offset, plain.last_offset, plain.upstream, d1) == (7, 8, None, 1)
    assert states[("orders", 0)].acked_next == 7


class DropOdd:
    def handle(self, msg: Any) -> tuple[bytes | None, bytes | None, Any] | None:
        return None if msg.offset() % 2 else (msg.key(), msg.value(), msg.headers())


class DropAll:
    def handle(self, msg: Any) -> None:
        return None


def test_a_fully_filtered_run_waits_for_the_runs_before_it() -> None:
    producer, fake, states = _setup()
    producer.replicate([FakeMessage("orders", 0, o) for o in range(4)], states, DropOdd(), _no_error)  # type: ignore[arg-type]
    producer.replicate([FakeMessage("orders", 0, o) for o in range(4, 8)], states, DropAll(), _no_error)  # type: ignore[arg-type]
    state = states[("orders", 0)]
    assert state.acked_next == 0 and state.pending_next == 8
    assert [p.value for p in fake.produced] == [b"v", b"v"]
    fake.deliver_all()
    assert state.acked_next == 8 and state.pending_next is None


def test_identity_policy_marks_provenance_and_never_sends_a_record_back() -> None:
    producer, fake, states = _setup(replication_policy_class="IdentityReplicationPolicy")
    own = FakeMessage("orders", 0, 0, _headers=[("x", b"1")])
    echoed = FakeMessage("orders", 0, 1, _headers=[(PROVENANCE_HEADER, b"us-east")])
    producer.replicate([own, echoed], states, None, _no_error)  # type: ignore[arg-type]
    assert [p.headers for p in fake.produced] == [[("x", b"1"), (PROVENANCE_HEADER, b"us-west")]]
    fake.deliver_all()
    assert states[("orders", 0)].acked_next == 2


def test_records_sent_after_an_idle_spell_are_not_reported_as_a_stall() -> None:
    producer, fake, states = _setup()
    producer.replicate([FakeMessage("orders", 0, 0)], states, None, _no_error)  # type: ignore[arg-type]
    fake.deliver_all()
    producer.last_ack -= 60  # a minute with nothing to send
    assert producer.stalled_for(time.monotonic()) == 0.0
    producer.replicate([FakeMessage("orders", 0, 1)], states, None, _no_error)  # type: ignore[arg-type]
    assert producer.stalled_for(time.monotonic()) < 1.0
    producer.last_ack -= 20  # now the target really keeps it unacknowledged
    assert producer.stalled_for(time.monotonic()) >= 20


def test_a_fatal_error_waits_briefly_for_the_refusal_behind_it() -> None:
    producer, fake, states = _setup()
    producer.replicate([FakeMessage("orders", 0, i) for i in range(3)], states, None, _no_error)  # type: ignore[arg-type]
    polls = []

    def poll(timeout: float = 0) -> int:  # the refused send is reported on the third poll after produce() raised
        polls.append(timeout)
        if len(polls) == 3:
            fake.deliver_all(KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED))
        return 0

    fake.poll = poll  # type: ignore[method-assign]
    producer.error_cb(KafkaError(KafkaError._FATAL, "Gap-less ordering would not be guaranteed", fatal=True))
    assert producer.fatal_detail(wait=5.0) == (
        "us-east refused WRITE on TOPIC us-west.orders (TOPIC_AUTHORIZATION_FAILED): grant it to the flow's principal"
        " (upstream offsets 0..2)"
    )
    assert len(polls) == 3
    with pytest.raises(AclRefusedError):
        producer.raise_if_failed()


def test_a_fatal_error_with_nothing_held_is_told_at_once() -> None:
    producer, _, _ = _setup()
    producer.error_cb(KafkaError(KafkaError._FATAL, "fenced", fatal=True))
    started = time.monotonic()
    assert producer.fatal_detail(wait=5.0) == "producer fatal error: fenced"
    assert time.monotonic() - started < 1.0
