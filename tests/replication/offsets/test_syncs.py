"""The offset-sync emitter and store, case by case (the model test in test_offset_sync_model covers the rest)."""

from __future__ import annotations

from confluent_kafka import TopicPartition

from replication.config import ClusterConfig, FlowConfig
from replication.kafka.internaltopics import offset_syncs_cluster, offset_syncs_topic
from replication.mm2.records import OffsetSync
from replication.offsets.partitionstate import PartitionState, Run
from replication.offsets.syncs import (
    EPOCH_HEADER,
    EPOCH_START,
    ONE_FOR_ONE,
    OffsetSyncEmitter,
    PartitionSyncs,
    stretches,
)
from replication.offsets.syncstore import OffsetSyncStore
from tests.support.fakes import FakeClients, store_of, syncs_of


def _flow(**changes: object) -> FlowConfig:
    return FlowConfig(
        ClusterConfig("us-west", {"bootstrap.servers": "w:9092"}),
        ClusterConfig("us-east", {"bootstrap.servers": "e:9092"}),
        **changes,  # type: ignore[arg-type]
    )


def _state(start: int = 0) -> PartitionState:
    return PartitionState("orders", 0, "us-west.orders", acked_next=start, stored_next=start)


def _ack(emitter: OffsetSyncEmitter, state: PartitionState, upstream: list[int], downstream_first: int) -> None:
    contiguous = upstream[-1] - upstream[0] + 1 == len(upstream)
    run = Run(state, upstream[0], upstream[-1], len(upstream), 0, 0, 0.0, None if contiguous else upstream)
    state.inflight += 1
    last = downstream_first + len(upstream) - 1
    state.run_acked(run.next_offset, last)
    emitter.run_acked(run, last)


def test_the_topic_is_named_after_the_other_cluster_and_lives_in_the_source_by_default() -> None:
    assert offset_syncs_topic(_flow()) == "mm2-offset-syncs.us-east.internal"
    assert offset_syncs_cluster(_flow()).alias == "us-west"
    target = _flow(offset_syncs_topic_location="target")
    assert offset_syncs_topic(target) == "mm2-offset-syncs.us-west.internal"
    assert offset_syncs_cluster(target).alias == "us-east"


def test_a_run_splits_into_stretches_only_where_upstream_offsets_jump() -> None:
    state = _state()
    assert list(stretches(Run(state, 5, 9, 5, 0, 0, 0.0), 104)) == [(5, 100, 5)]
    gappy = Run(state, 0, 9, 6, 0, 0, 0.0, [0, 1, 2, 5, 6, 9])
    assert list(stretches(gappy, 15)) == [(0, 10, 3), (5, 13, 2), (9, 15, 1)]
    handled_contiguous = Run(state, 3, 7, 3, 0, 0, 0.0, [3, 4, 5])  # trailing records dropped by a handler
    assert list(stretches(handled_contiguous, 2)) == [(3, 0, 3)]


def test_a_contiguous_stream_needs_one_sync_and_one_frontier_per_commit() -> None:
    clients = FakeClients()
    emitter = OffsetSyncEmitter(_flow(), clients=clients)  # type: ignore[arg-type]
    state = _state(100)
    for first in range(100, 1100, 100):
        _ack(emitter, state, list(range(first, first + 100)), first - 100)
    emitter.committed()
    _ack(emitter, state, list(range(1100, 1200)), 1000)
    emitter.committed()
    assert syncs_of(clients.producers["us-west"]) == [
        ("orders", 0, 100, 0, True),
        ("orders", 0, 1100, 1000, False),
        ("orders", 0, 1200, 1100, False),
    ]


def test_the_producer_and_topic_are_made_once_however_often_the_queue_drains() -> None:
    """A real producer with nothing queued is falsy (len() 0): `producer or start()` made a new producer and listed
    the cluster's metadata at every write after the queue drained."""
    clients = FakeClients()
    emitter = OffsetSyncEmitter(_flow(), clients=clients)  # type: ignore[arg-type]
    state = _state(100)
    for first in range(100, 400, 100):
        _ack(emitter, state, list(range(first, first + 100)), first - 100)
        emitter.committed()
    assert len(syncs_of(clients.producers["us-west"])) >= 3  # each commit wrote
    assert clients.producers_made == 1
    assert clients.admins["us-west"].created == [offset_syncs_topic(_flow())]


def test_a_gap_adds_one_sync_at_the_first_record_after_it() -> None:
    clients = FakeClients()
    emitter = OffsetSyncEmitter(_flow(), clients=clients)  # type: ignore[arg-type]
    state = _state()
    _ack(emitter, state, [0, 1, 2, 3, 7, 8, 9], 0)  # 4..6 compacted away
    emitter.committed()
    store = store_of(clients.producers["us-west"])
    assert [store.translate("orders", 0, p) for p in range(11)] == [0, 1, 2, 3, 4, 4, 4, 4, 5, 6, 7]
    assert store.translate("orders", 0, 11) is None  # beyond what was replicated: no guess


def test_exactly_once_frontiers_step_over_the_commit_marker() -> None:
    clients = FakeClients()
    tip = [12]
    emitter = OffsetSyncEmitter(
        _flow(exactly_once=True),
        lambda tps: [TopicPartition("orders", 0, tip[0])],
        clients=clients,  # type: ignore[arg-type]
    )
    state = _state()
    _ack(emitter, state, [0, 1, 2, 3, 4, 6, 7, 8, 9, 10], 0)  # source marker at 5; 11 is a marker too
    emitter.committed()  # target: copies at 0..9, our commit marker at 10
    store = store_of(clients.producers["us-west"])
    assert store.translate("orders", 0, 10) == 9
    assert store.translate("orders", 0, 11) == 11  # after both markers: where the next copy will land
    assert store.translate("orders", 0, 12) == 11


def test_an_aborted_transaction_leaves_no_syncs_and_the_retry_rewrites_the_frontier() -> None:
    clients = FakeClients()
    emitter = OffsetSyncEmitter(_flow(exactly_once=True), clients=clients)  # type: ignore[arg-type]
    state = _state()
    _ack(emitter, state, [0, 1, 2, 3], 0)
    state.stored_next = state.acked_next
    emitter.committed()  # marker at 4; frontier (4, 5)
    _ack(emitter, state, [4, 5], 5)
    emitter.aborted()  # junk at 5, 6; abort marker at 7
    state.acked_next = state.stored_next
    _ack(emitter, state, [4, 5], 8)
    emitter.committed()
    store = store_of(clients.producers["us-west"])
    assert [store.translate("orders", 0, p) for p in range(7)] == [0, 1, 2, 3, 8, 9, 11]


def test_a_downstream_gap_without_a_commit_gets_its_own_flat_start() -> None:
    syncs = PartitionSyncs(_state())
    syncs.stretch(0, 0, 3)
    assert syncs.stretch(5, 10, 2) == [(3, 10, False), (5, 10, False)]  # someone else wrote at 3..9


def test_a_restart_from_an_older_position_replaces_what_follows_it() -> None:
    clients = FakeClients()
    first = OffsetSyncEmitter(_flow(), clients=clients)  # type: ignore[arg-type]
    state = _state()
    _ack(first, state, list(range(0, 150)), 0)
    first.committed()
    again = OffsetSyncEmitter(_flow(), clients=clients)  # type: ignore[arg-type]
    state = _state(100)  # the position stored at 150 was lost
    _ack(again, state, list(range(100, 120)), 150)
    again.committed()
    store = store_of(clients.producers["us-west"])
    assert store.translate("orders", 0, 99) == 99  # only the first copy exists
    assert store.translate("orders", 0, 100) == 150  # the newest copy
    assert store.translate("orders", 0, 120) == 170
    assert store.translate("orders", 0, 121) is None  # the second epoch has not got here yet


def test_the_store_refuses_to_interpolate_across_an_epoch_start() -> None:
    store = OffsetSyncStore()
    store.add(OffsetSync("t", 0, 0, 0), epoch_start=True)
    store.add(OffsetSync("t", 0, 10, 10))
    store.add(OffsetSync("t", 0, 50, 300), epoch_start=True)
    assert store.translate("t", 0, 10) == 10
    assert store.translate("t", 0, 30) is None  # what happened between 10 and 50 is unknown
    assert store.translate("t", 0, 50) == 300
    assert store.coverage("t", 0) == (0, 50)
    assert store.translate("t", 1, 0) is None


def test_a_later_sync_for_the_same_position_replaces_the_earlier_one() -> None:
    store = OffsetSyncStore()
    store.add(OffsetSync("t", 0, 0, 0), epoch_start=True)
    store.add(OffsetSync("t", 0, 5, 6))
    store.add(OffsetSync("t", 0, 5, 9))
    assert store.translate("t", 0, 5) == 9
    assert len(store) == 2


def test_an_idle_partition_rewrites_its_frontier_before_retention_can_delete_it() -> None:
    clients = FakeClients()
    now = [0.0]
    emitter = OffsetSyncEmitter(_flow(), clients=clients, clock=lambda: now[0])  # type: ignore[arg-type]
    state = _state()
    _ack(emitter, state, [0, 1, 2], 0)
    emitter.committed()
    written = len(clients.producers["us-west"].records)
    now[0] += 3600
    emitter.committed()
    assert len(clients.producers["us-west"].records) == written  # nothing new to say
    now[0] += emitter.rewrite_after
    emitter.committed()
    assert syncs_of(clients.producers["us-west"])[-1] == ("orders", 0, 3, 3, False)


def test_a_lost_sync_restarts_the_epoch_so_readers_never_step_over_the_hole() -> None:
    clients = FakeClients()
    emitter = OffsetSyncEmitter(_flow(), clients=clients)  # type: ignore[arg-type]
    state = _state()
    _ack(emitter, state, list(range(0, 10)), 0)
    emitter.committed()
    producer = clients.producers["us-west"]
    producer.fail_next = True
    _ack(emitter, state, [20, 21, 22], 10)  # 10..19 dropped by a handler: this sync is the one lost
    emitter.committed()
    emitter.committed()  # the failed delivery is reported: a new epoch begins at the next copy
    _ack(emitter, state, [23, 24, 30], 13)
    emitter.committed()
    store = store_of(producer)
    assert store.translate("orders", 0, 5) == 5  # before the hole: still exact
    assert store.translate("orders", 0, 15) is None  # the lost sync said where 10..22 went: no guess
    assert store.translate("orders", 0, 23) == 13  # the new epoch starts at its first copy, not before it
    assert store.translate("orders", 0, 30) == 15


def test_a_full_queue_does_not_block_replication_and_restarts_the_epoch() -> None:
    clients = FakeClients()
    emitter = OffsetSyncEmitter(_flow(), clients=clients)  # type: ignore[arg-type]
    state = _state()
    _ack(emitter, state, [0, 1, 2], 0)
    emitter.committed()
    clients.producers["us-west"].full = True
    _ack(emitter, state, [3, 4, 9], 3)
    emitter.committed()  # returns: replication is not held up by offset syncs
    clients.producers["us-west"].full = False
    _ack(emitter, state, [10, 11], 6)
    emitter.committed()
    store = store_of(clients.producers["us-west"])
    assert store.translate("orders", 0, 2) == 2
    assert store.translate("orders", 0, 8) is None
    assert [store.translate("orders", 0, p) for p in (10, 11, 12)] == [6, 7, 8]


def test_between_sweeps_a_commit_asks_positions_only_of_partitions_acknowledged_since_the_last() -> None:
    clients, now, asked = FakeClients(), [0.0], []

    def positions(tps: list[TopicPartition]) -> list[TopicPartition]:
        asked.append(sorted(tp.partition for tp in tps))
        return [TopicPartition(tp.topic, tp.partition, 10 + 2) for tp in tps]  # a source marker after offset 9

    emitter = OffsetSyncEmitter(_flow(), positions, clients=clients, clock=lambda: now[0])  # type: ignore[arg-type]
    states = [PartitionState("orders", p, "us-west.orders", acked_next=0, stored_next=0) for p in range(500)]
    for p, state in enumerate(states):
        _ack(emitter, state, list(range(10)), 10 * p)
    emitter.committed()
    assert asked == [list(range(500))]  # the first commit sweeps

    now[0] = 1.0
    _ack(emitter, states[3], [12], 5000)
    emitter.committed()
    assert asked[-1] == [3]
    assert syncs_of(clients.producers["us-west"])[-1] == ("orders", 3, 13, 5001, False)

    now[0] = 2.0
    emitter.committed()
    assert len(asked) == 2  # nothing acknowledged: no request at all

    now[0] = emitter.sweep.interval
    emitter.committed()
    assert asked[-1] == list(range(500))


def test_a_sweep_skips_partitions_settled_at_an_unchanged_end_offset_until_it_moves() -> None:
    clients, now, asked = FakeClients(), [0.0], []
    at = {p: 10 for p in range(500)}  # each partition's consumer position: caught up at its end offset

    def positions(tps: list[TopicPartition]) -> list[TopicPartition]:
        asked.append(sorted(tp.partition for tp in tps))
        return [TopicPartition(tp.topic, tp.partition, at[tp.partition]) for tp in tps]

    emitter = OffsetSyncEmitter(_flow(), positions, clients=clients, clock=lambda: now[0])  # type: ignore[arg-type]
    states = [PartitionState("orders", p, "us-west.orders", acked_next=0, stored_next=0, hw=10) for p in range(500)]
    for p, state in enumerate(states):
        _ack(emitter, state, list(range(10)), 10 * p)
    emitter.committed()
    assert asked == [list(range(500))]

    now[0] += emitter.sweep.interval
    emitter.committed()
    assert len(asked) == 1  # every position is at its end offset, which has not moved: nothing to ask

    states[7].hw = 12  # a source commit marker (and one aborted record) after offset 9, not yet passed
    now[0] += emitter.sweep.interval
    emitter.committed()
    assert asked[-1] == [7]
    written = len(clients.producers["us-west"].records)

    at[7] = 12  # the consumer steps over them after that sweep: the next one still looks
    now[0] += emitter.sweep.interval
    emitter.committed()
    assert asked[-1] == [7]
    assert syncs_of(clients.producers["us-west"])[written:] == [("orders", 7, 12, 80, False)]

    now[0] += emitter.sweep.interval
    emitter.committed()
    assert len(asked) == 3  # settled again at the new end offset


def test_syncs_mirrormaker_2_wrote_translate_by_its_rule_never_ahead() -> None:
    store = OffsetSyncStore()
    store.add(OffsetSync("t", 0, 0, 0), sparse=True)
    store.add(OffsetSync("t", 0, 100, 90), sparse=True)  # MM2 dropped its syncs between: 10 records were filtered
    assert store.translate("t", 0, 0) == 0 and store.translate("t", 0, 100) == 90  # exact at a sync
    assert store.translate("t", 0, 50) == 1  # one past the copy of 0: not 50, which may lie past the record's copy
    assert store.translate("t", 0, 150) == 91  # past the last sync too, as MM2 translates
    assert store.by_mm2_rule("t", 0, 50) and not store.by_mm2_rule("t", 0, 100)
    mine = OffsetSyncStore()
    mine.add(OffsetSync("t", 0, 0, 0), epoch_start=True)
    mine.add(OffsetSync("t", 0, 100, 100))
    assert mine.translate("t", 0, 50) == 50 and not mine.by_mm2_rule("t", 0, 50)


def test_every_sync_mirrorplane_writes_says_so_in_its_header() -> None:
    clients = FakeClients()
    emitter = OffsetSyncEmitter(_flow(), clients=clients)  # type: ignore[arg-type]
    state = _state(0)
    _ack(emitter, state, list(range(0, 20)), 0)
    emitter.committed()
    headers = [record.headers for record in clients.producers["us-west"].records]
    assert headers and all(h is not None and h[0][0] == EPOCH_HEADER for h in headers)
    assert headers[0] is not None and headers[0][0][1] == EPOCH_START
    assert {h[0][1] for h in headers[1:] if h is not None} <= {ONE_FOR_ONE}
