"""Acceptance 1: after replication catches up, every translated offset is exact: 0 re-read, 0 skipped.

Each scenario replicates a source topic whose offsets have a particular shape (plain, transactions with aborts,
compaction gaps, an exactly-once target full of markers, records a handler drops), then checks every upstream
position of every partition: resuming at the translated downstream offset reads byte for byte what resuming at
the upstream offset reads. Consumer groups placed at the tricky positions are then checkpointed and translated
through the CLI's translator, and those answers are checked the same way.
"""

from __future__ import annotations

import itertools
import time
from bisect import bisect_left
from collections.abc import Callable

import pytest
from confluent_kafka import KafkaError, Producer

from replication.config import FlowConfig
from replication.emitters.checkpoints import CheckpointEmitter
from replication.offsets.mirrorclient import MirrorClient
from replication.offsets.syncstore import OffsetSyncReader
from replication.offsets.translation import SYNC, OffsetTranslator
from tests.support.kafka import create_topic, end_offsets, small_segment_config, unique_topic
from tests.support.replication import drive, make_flow, new_task, produce_known
from tests.support.translation import (
    Copy,
    assert_exact,
    place_groups,
    produce_transactions,
    read_partition,
    replicate,
)

pytestmark = [pytest.mark.kafka, pytest.mark.compat]
Replicated = Callable[[Copy], bool]


def _everything(record: Copy) -> bool:
    return True


def check_every_position(
    flow: FlowConfig, topic: str, partitions: int, isolation: str, replicated: Replicated = _everything
) -> dict[int, tuple[list[Copy], list[Copy]]]:
    """Every upstream position 0..end of every partition translates exactly; returns the partitions' records.

    The whole partition is compared once (the replicated source records equal the target's, in order); then a
    translation of U to D is exact iff as many target records precede D as replicated source records precede U.
    """
    src, dst = flow.source.bootstrap_servers, flow.target.bootstrap_servers
    remote = flow.policy().format_remote_topic(flow.source.alias, topic)
    reader = OffsetSyncReader(flow)
    reader.update()
    reader.close()
    ends = end_offsets(src, topic, range(partitions))
    seen = {}
    for p in range(partitions):
        source, target = read_partition(src, topic, p, isolation), read_partition(dst, remote, p, isolation)
        want = [r for r in source if replicated(r)]
        assert want, f"{topic}-{p}: nothing to check"
        assert [r.fingerprint for r in target] == [r.fingerprint for r in want], f"partition {p} differs"
        up, down = [r.offset for r in want], [r.offset for r in target]
        for position in range(ends[p] + 1):
            translated = reader.store.translate(topic, p, position)
            assert translated is not None, f"{topic}-{p}: upstream {position} not translated"
            assert bisect_left(down, translated) == bisect_left(up, position), (
                f"{topic}-{p}: upstream {position} -> downstream {translated} is not exact"
            )
        seen[p] = (source, target)
    return seen


def check_groups(
    flow: FlowConfig,
    topic: str,
    positions: dict[int, list[int]],
    records: dict[int, tuple[list[Copy], list[Copy]]],
    replicated: Replicated = _everything,
) -> None:
    """Groups at the positions get checkpoints, and the CLI translator agrees with them; both are exact."""
    prefix = unique_topic("grp")
    groups = place_groups(flow.source.bootstrap_servers, prefix, topic, positions)
    scoped = flow.replace(groups=(f"{prefix}-.*",))
    emitter = CheckpointEmitter(scoped)
    try:
        assert emitter.run_once()
    finally:
        emitter.close()
    assert emitter.untranslated == 0
    target = MirrorClient(flow.target)
    translator = OffsetTranslator(scoped)
    try:
        for i, group in enumerate(groups):
            checkpointed = target.remote_consumer_offsets(group, flow.source.alias)
            for row in translator.translate_group(group):
                assert row.method == SYNC and not row.approximate
                assert checkpointed[(row.remote_topic, row.partition)] == row.downstream_offset
                source, copies = records[row.partition]
                assert row.upstream_offset == positions[row.partition][i]
                what = f"group {group} {topic}-{row.partition}"
                assert_exact(source, copies, row.upstream_offset, row.downstream_offset, replicated, what)
    finally:
        translator.close()


def _caught_up(flow: FlowConfig, topic: str, partitions: int, expected: int) -> Callable[[], bool]:
    remote = flow.policy().format_remote_topic(flow.source.alias, topic)
    dst = flow.target.bootstrap_servers

    def done() -> bool:
        try:
            return sum(end_offsets(dst, remote, range(partitions)).values()) >= expected
        except Exception:
            return False

    return done


def test_groups_at_the_tip_and_10k_behind_translate_exactly_and_the_tip_stays_exact(
    kafka_clusters: dict[str, str],
) -> None:
    topic = unique_topic("tip")
    create_topic(kafka_clusters["us-west"], topic, partitions=2)
    produce_known(kafka_clusters["us-west"], topic, partitions=2, count=22_000)
    flow = make_flow(kafka_clusters, "us-west", "us-east", topic)
    replicate(flow, _caught_up(flow, topic, 2, 22_000), "22k records at the target")
    records = check_every_position(flow, topic, 2, "read_uncommitted")
    positions = {p: [11_000, 1_000, 0, 10_999, 5_432] for p in range(2)}  # the tip, 10k behind, ...
    check_groups(flow, topic, positions, records)

    translator = OffsetTranslator(flow)
    try:
        tip = [translator.translate(topic, p, 11_000) for p in range(2)]
    finally:
        translator.close()
    produce_known(kafka_clusters["us-west"], topic, partitions=2, count=20, start=22_000)
    replicate(flow, _caught_up(flow, topic, 2, 22_020), "20 more records")
    for p in range(2):  # the tip translated before the new records arrived is where their copies landed
        source = read_partition(kafka_clusters["us-west"], topic, p, "read_uncommitted")
        target = read_partition(kafka_clusters["us-east"], f"us-west.{topic}", p, "read_uncommitted")
        assert_exact(source, target, 11_000, tip[p].downstream_offset, what=f"old tip of partition {p}")
        assert len([r for r in target if r.offset >= tip[p].downstream_offset]) == 10


TRANSACTIONS = [(40, True), (25, False), (1, True), (3, False), (1, False), (30, True), (7, False), (12, True)]


@pytest.mark.parametrize("exactly_once", [True, False], ids=["exactly-once", "at-least-once"])
def test_groups_inside_aborted_and_committed_transactions_translate_exactly(
    kafka_clusters: dict[str, str], exactly_once: bool
) -> None:
    topic = unique_topic("txn")
    create_topic(kafka_clusters["us-east"], topic, partitions=1)
    produce_transactions(kafka_clusters["us-east"], topic, TRANSACTIONS * 3)
    isolation = "read_committed" if exactly_once else "read_uncommitted"  # at least once copies aborted records
    copied = sum(n for n, commit in TRANSACTIONS * 3 if commit or not exactly_once)
    flow = make_flow(kafka_clusters, "us-east", "backup", topic, exactly_once=exactly_once)
    replicate(flow, _caught_up(flow, topic, 1, copied), "transactions at the target")
    records = check_every_position(flow, topic, 1, isolation)
    end = end_offsets(kafka_clusters["us-east"], topic, [0])[0]
    # A commit marker, an aborted record, the first record after an abort, the marker after an abort, the tip.
    positions = {0: [40, 41, 66, 67, 68, 69, 72, 73, 105, end - 1, end]}
    check_groups(flow, topic, positions, records)


def test_an_abort_after_a_partition_settled_is_swept_and_its_new_end_translates_exactly(
    kafka_clusters: dict[str, str],
) -> None:
    """The offset-sync sweep skips a partition settled at an unchanged source end offset. An aborted transaction
    appended while the task idles moves that end offset, and the position over records the task never sees: the
    next sweep must look at the partition again and write the frontier at the new end, while the task runs on."""
    src, dst = kafka_clusters["us-east"], kafka_clusters["backup"]
    topic = unique_topic("settled")
    create_topic(src, topic, partitions=1)
    produce_transactions(src, topic, [(10, True)])
    flow = make_flow(kafka_clusters, "us-east", "backup", topic, exactly_once=True)
    remote = flow.policy().format_remote_topic(flow.source.alias, topic)
    task = new_task(flow)
    reader = OffsetSyncReader(flow)
    try:
        emitter = task.offset_syncs
        assert emitter is not None

        def settled_at(end: int) -> Callable[[], bool]:
            def done() -> bool:
                syncs = emitter.partitions.get((topic, 0))
                return syncs is not None and syncs.settled_hw == end

            return done

        first_end = end_offsets(src, topic, [0])[0]
        assert first_end == 11  # ten records and the commit marker
        drive([task], settled_at(first_end), 60, "the partition settled at the source end offset")
        produce_transactions(src, topic, [(5, False)])
        end = end_offsets(src, topic, [0])[0]
        assert end == first_end + 6  # five aborted records and the abort marker, none of them delivered

        def synced_at_end() -> bool:
            reader.update(5)
            return reader.store.translate(topic, 0, end) is not None

        drive([task], synced_at_end, 60, "an offset sync at the new source end offset")
        assert emitter.partitions[(topic, 0)].settled_hw == end  # settled again, at the new end
        target_end = end_offsets(dst, remote, [0])[0]
        assert target_end == 11  # the ten copies and their commit marker; nothing of the abort
        assert reader.store.translate(topic, 0, end) == target_end
        assert reader.store.translate(topic, 0, first_end) == target_end
    finally:
        reader.close()
        task.close()


def test_groups_on_a_compacted_topic_with_gaps_translate_exactly(kafka_clusters: dict[str, str]) -> None:
    src = kafka_clusters["backup"]
    topic = unique_topic("compact")
    config = {"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.01", **small_segment_config(src, 16384)}
    create_topic(src, topic, partitions=1, config=config)
    _produce_keyed(src, topic, keys=3000)
    survivors = _wait_for_compaction(src, topic, below=4000)
    flow = make_flow(kafka_clusters, "backup", "us-west", topic, sync_topic_configs_enabled=False)
    replicate(flow, _caught_up(flow, topic, 1, survivors), "compacted records at the target")
    records = check_every_position(flow, topic, 1, "read_uncommitted")
    source = records[0][0]
    gap = next(a.offset + 1 for a, b in itertools.pairwise(source) if b.offset != a.offset + 1)
    positions = {0: [0, gap - 1, gap, gap + 1, source[-1].offset, source[-1].offset + 1]}
    check_groups(flow, topic, positions, records)


def _produce_keyed(bootstrap: str, topic: str, keys: int) -> None:
    """Every key once, then most keys again, so compaction leaves gaps of irregular sizes in the first round.

    Small batches (a batch larger than segment.bytes is refused), every delivery checked.
    """
    producer = Producer({"bootstrap.servers": bootstrap, "batch.size": 4096, "linger.ms": 5})
    failures: list[str] = []

    def delivered(err: KafkaError | None, msg: object) -> None:
        if err is not None:
            failures.append(err.str())

    again = [k for k in range(keys) if k % 5 != 0 and k % 13 not in (3, 4)]
    for i, key in enumerate([*range(keys), *again]):
        value = f"v-{i:06d}-".encode() + b"x" * 40
        producer.produce(topic, value, f"key-{key}".encode(), 0, on_delivery=delivered)
        producer.poll(0)
    assert producer.flush(60) == 0 and not failures, failures[:3]


def _wait_for_compaction(bootstrap: str, topic: str, below: int, timeout: float = 120.0) -> int:
    """Wait until the cleaner has removed records and stopped (same count for 4 s); returns how many remain."""
    deadline = time.monotonic() + timeout
    counts: list[int] = []
    while len(counts) < 5 or counts[-1] >= below or len(set(counts[-5:])) > 1:
        assert time.monotonic() < deadline, f"{topic}: the log cleaner left {counts[-1:]} records after {timeout}s"
        counts.append(len(read_partition(bootstrap, topic, 0, "read_uncommitted")))
        time.sleep(1.0)
    return counts[-1]


def test_groups_on_an_exactly_once_flow_full_of_transaction_markers_translate_exactly(
    kafka_clusters: dict[str, str],
) -> None:
    topic = unique_topic("eos")
    create_topic(kafka_clusters["us-west"], topic, partitions=2)
    produce_known(kafka_clusters["us-west"], topic, partitions=2, count=3000)
    flow = make_flow(kafka_clusters, "us-west", "backup", topic, exactly_once=True, transaction_boundary_interval_ms=5)
    replicate(flow, _caught_up(flow, topic, 2, 3000), "exactly-once copies", batch_size=97)  # many transactions
    ends = end_offsets(kafka_clusters["backup"], f"us-west.{topic}", range(2))
    assert all(end > 1500 for end in ends.values())
    assert sum(ends.values()) > 3000 + 10, "expected many transaction markers downstream"
    records = check_every_position(flow, topic, 2, "read_committed")
    positions = {p: [0, 96, 97, 98, 1499, 1500] for p in range(2)}
    check_groups(flow, topic, positions, records)


def _dropped(value: bytes | None) -> bool:
    """Test records (`p0-000000012-xxx`) whose sequence number is a multiple of three; anything else is kept."""
    parts = (value or b"").split(b"-")
    return len(parts) > 2 and parts[1].isdigit() and int(parts[1]) % 3 == 0


class DropEveryThird:
    """A RecordHandler for tests: drops every third test record, passes everything else (heartbeats too)."""

    def handle(self, msg: object) -> object:
        value = msg.value()  # type: ignore[attr-defined]
        return None if _dropped(value) else (msg.key(), value, msg.headers())  # type: ignore[attr-defined]


def _kept(record: Copy) -> bool:
    return not _dropped(record.fingerprint[1])


@pytest.mark.parametrize("location", ["source", "target"])
def test_groups_at_records_a_handler_dropped_translate_exactly(kafka_clusters: dict[str, str], location: str) -> None:
    topic = unique_topic("drop")
    create_topic(kafka_clusters["us-east"], topic, partitions=2)
    produce_known(kafka_clusters["us-east"], topic, partitions=2, count=3000)
    handler = f"{__name__}:DropEveryThird"
    flow = make_flow(
        kafka_clusters, "us-east", "us-west", topic, record_handler_class=handler, offset_syncs_topic_location=location
    )
    replicate(flow, _caught_up(flow, topic, 2, 2000), "the kept two thirds at the target")
    records = check_every_position(flow, topic, 2, "read_uncommitted", _kept)
    positions = {p: [0, 1, 2, 3, 1497, 1498, 1499, 1500] for p in range(2)}  # 0 and 1497 were dropped
    check_groups(flow, topic, positions, records, _kept)


def test_after_a_restart_that_replicates_again_groups_resume_at_the_newest_copy(
    kafka_clusters: dict[str, str],
) -> None:
    from confluent_kafka import Producer

    from replication.kafka import positions as position_store

    topic = unique_topic("again")
    src, dst = kafka_clusters["us-west"], kafka_clusters["us-east"]
    create_topic(src, topic, partitions=1)
    produce_known(src, topic, partitions=1, count=1000)
    flow = make_flow(kafka_clusters, "us-west", "us-east", topic)
    replicate(flow, _caught_up(flow, topic, 1, 1000), "first copies")
    producer = Producer({"bootstrap.servers": dst})  # a stored position lost: the next task starts at 600
    position_store.write(producer, position_store.positions_topic("us-west"), [((topic, 0), _position(600, 1000))])
    assert producer.flush(30) == 0
    produce_known(src, topic, partitions=1, count=100, start=1000)
    replicate(flow, _caught_up(flow, topic, 1, 1000 + 500), "second copies from 600")
    source = read_partition(src, topic, 0, "read_uncommitted")
    target = read_partition(dst, f"us-west.{topic}", 0, "read_uncommitted")
    translator = OffsetTranslator(flow)
    try:
        for upstream in (600, 601, 999, 1000, 1099, 1100):
            row = translator.translate(topic, 0, upstream)
            assert row.method == SYNC
            assert_exact(source, target, upstream, row.downstream_offset, what=f"upstream {upstream}")
            assert row.downstream_offset >= 1000  # the newest copy, not the first
        first = translator.translate(topic, 0, 100)  # only one copy exists: it is where the group resumes
        assert first.downstream_offset == 100
    finally:
        translator.close()


def _position(next_offset: int, hw: int) -> object:
    from replication.kafka.positions import Position

    return Position(next_offset, hw)


def test_a_group_ahead_of_replication_falls_back_to_timestamps_and_says_so(kafka_clusters: dict[str, str]) -> None:
    topic = unique_topic("ahead")
    src = kafka_clusters["backup"]
    create_topic(src, topic, partitions=1)
    produce_known(src, topic, partitions=1, count=500)
    flow = make_flow(kafka_clusters, "backup", "us-east", topic)
    replicate(flow, _caught_up(flow, topic, 1, 500), "first 500")
    produce_known(src, topic, partitions=1, count=300, start=500)  # not replicated yet
    translator = OffsetTranslator(flow)
    try:
        ahead = translator.translate(topic, 0, 650)
        tip = translator.translate(topic, 0, 800)
        covered = translator.translate(topic, 0, 500)
    finally:
        translator.close()
    assert covered.method == SYNC and covered.downstream_offset == 500
    assert ahead.approximate and ahead.method == "timestamp"
    assert ahead.downstream_offset == 500  # the copies of 500.. do not exist yet: resume at the end
    assert "ahead of replication" in ahead.window
    assert tip.approximate and "source end" in tip.window
