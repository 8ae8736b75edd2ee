"""Model-based proof of exact translation: random replications through the real emitter, checked against the truth.

The model replicates one source partition whose offsets are records, gaps (markers, compacted or aborted
records) and records a handler drops. It reads in random batches, produces runs exactly as producing.py builds
them, commits or (exactly-once) aborts transactions with their markers, and restarts the task from older
positions. The truth for an upstream position p is the downstream offset of the copy of the first replicated
record at or after p, in the newest epoch that covers p; at the frontier, the next downstream offset.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import pytest
from confluent_kafka import TopicPartition

from replication.config import ClusterConfig, FlowConfig
from replication.offsets.partitionstate import PartitionState, Run
from replication.offsets.syncs import OffsetSyncEmitter
from tests.support.fakes import FakeClients, store_of


def _flow(exactly_once: bool) -> FlowConfig:
    return FlowConfig(
        ClusterConfig("a", {"bootstrap.servers": "a:9092"}),
        ClusterConfig("b", {"bootstrap.servers": "b:9092"}),
        exactly_once=exactly_once,
    )


@dataclass
class Epoch:
    """One task instance: the copies it committed, its last frontier and where its syncs start."""

    start: int | None = None
    copies: list[tuple[int, int]] = field(default_factory=list)  # committed (upstream, downstream), in order
    frontier: tuple[int, int] | None = None

    def truth(self, p: int) -> int | None:
        if self.start is None or self.frontier is None or not self.start <= p <= self.frontier[0]:
            return None
        return next((d for u, d in self.copies if u >= p), self.frontier[1])


class Simulation:
    def __init__(self, rng: random.Random, exactly_once: bool, handler: bool, size: int, sweeps: float = 1.0) -> None:
        self.rng = rng
        # A commit writes the frontier of a partition acknowledged since the last one; of any other partition (one
        # whose position moved over gaps or dropped records alone) only when it sweeps, every sweep interval. The
        # clock passes an interval before a commit with probability `sweeps` (1.0: every commit sweeps).
        self.sweeps = sweeps
        self.sweep_rng = random.Random(size)  # its own numbers: each seed replicates as it did before sweeps
        self.now = 0.0
        self.eos = exactly_once
        self.handler = handler
        kinds = rng.choice([(0.9, 0.05), (0.6, 0.3), (0.3, 0.2), (1.0, 0.0)])
        self.kind = [self._kind(kinds) for _ in range(size)]  # "r" record, "g" gap, "x" record dropped
        self.size = size
        self.clients = FakeClients()
        self.next_down = 0
        self.epochs: list[Epoch] = []

    def _kind(self, weights: tuple[float, float]) -> str:
        x = self.rng.random()
        if x < weights[0]:
            return "r"
        return "x" if self.handler and x < weights[0] + weights[1] else "g"

    def run_epoch(self, start: int, batches: int) -> int:
        """Replicate from start for some batches; returns the stored position (where a restart resumes)."""
        self.next_down += self.rng.choice([0, 0, 3])  # a crashed epoch's aborted leftovers, for instance
        state = PartitionState("t", 0, "a.t", acked_next=start, stored_next=start)
        position = [start]

        def positions(tps: list[TopicPartition]) -> list[TopicPartition]:
            return [TopicPartition("t", 0, position[0])]

        emitter = OffsetSyncEmitter(  # type: ignore[arg-type]
            _flow(self.eos), positions, clients=self.clients, clock=lambda: self.now
        )
        self.next_sweep, self.acked_since_commit = 0.0, False
        epoch = Epoch()
        self.epochs.append(epoch)
        txn: list[tuple[int, int]] = []
        for _ in range(batches):
            end = min(position[0] + self.rng.randint(1, 12), self.size)
            txn += self._batch(state, emitter, epoch, position[0], end)
            position[0] = end
            if self.rng.random() < 0.4:
                txn = self._commit(state, emitter, epoch, txn, position)
        return state.stored_next

    def _batch(self, state: PartitionState, emitter: OffsetSyncEmitter, epoch: Epoch, begin: int, end: int) -> list:
        delivered = [o for o in range(begin, end) if self.kind[o] != "g"]
        produced = [o for o in delivered if self.kind[o] == "r"]
        if not delivered:
            return []
        if not produced:
            state.filtered_run(delivered[-1] + 1)
            return []
        if self.handler:
            run = Run(state, produced[0], delivered[-1], len(produced), 0, 0, 0.0, produced)
        else:
            gaps = produced[-1] - produced[0] + 1 != len(produced)
            run = Run(state, produced[0], produced[-1], len(produced), 0, 0, 0.0, produced if gaps else None)
        copies = [(u, self.next_down + i) for i, u in enumerate(produced)]
        self.next_down += len(produced)
        state.inflight += 1
        state.run_acked(run.next_offset, copies[-1][1])
        if epoch.start is None:
            epoch.start = min(state.stored_next, produced[0])
        emitter.run_acked(run, copies[-1][1])
        self.acked_since_commit = True
        return copies

    def _commit(self, state, emitter, epoch, txn, position) -> list:  # type: ignore[no-untyped-def]
        if self.eos and txn:
            self.next_down += 1  # the commit or abort marker
        if self.eos and self.rng.random() < 0.2:
            emitter.aborted()
            state.acked_next = state.stored_next
            position[0] = state.stored_next
            if not epoch.copies:
                epoch.start = None
            return []
        state.stored_next = state.acked_next
        if self.sweep_rng.random() < self.sweeps:
            self.now += emitter.sweep.interval
        sweeping = self.now >= self.next_sweep
        if sweeping:
            self.next_sweep = self.now + emitter.sweep.interval
        emitter.committed()
        epoch.copies += txn
        looked_at, self.acked_since_commit = sweeping or self.acked_since_commit, False
        if emitter.partitions and looked_at:
            syncs = emitter.partitions[("t", 0)]
            frontier = max(position[0], state.acked_next)
            if frontier > syncs.last_upstream:
                down = syncs.last_downstream + 1 + (1 if self.eos else 0)
                if epoch.frontier is not None and epoch.frontier[1] == down:
                    # No copy since the last frontier: an abort rolled back to a lower position, and what the last
                    # frontier covered still holds (the source did not change; the next copy rewrites it).
                    frontier = max(frontier, epoch.frontier[0])
                epoch.frontier = (frontier, down)
        return []

    def truth(self, p: int) -> int | None:
        for i in range(len(self.epochs) - 1, -1, -1):
            epoch = self.epochs[i]
            if epoch.start is None or epoch.frontier is None or p < epoch.start:
                continue
            later = [e.start for e in self.epochs[i + 1 :] if e.start is not None and e.frontier is not None]
            if later and p >= min(later):
                return None
            return epoch.truth(p)
        return None


def _scenario(seed: int, exactly_once: bool, handler: bool, sweeps: float) -> Simulation:
    rng = random.Random(seed)
    sim = Simulation(rng, exactly_once, handler, size=rng.randint(20, 200), sweeps=sweeps)
    resume = 0
    for _ in range(rng.randint(1, 4)):
        stored = sim.run_epoch(resume, rng.randint(1, 30))
        resume = rng.randint(max(0, stored - 15), stored)  # lost position writes replay older records
    return sim


@pytest.mark.parametrize("exactly_once", [False, True], ids=["at-least-once", "exactly-once"])
@pytest.mark.parametrize("handler", [False, True], ids=["no-handler", "dropping-handler"])
@pytest.mark.parametrize("sweeps", [1.0, 0.2], ids=["every-commit-sweeps", "few-commits-sweep"])
def test_every_covered_position_translates_to_the_newest_copy_of_the_next_replicated_record(
    exactly_once: bool, handler: bool, sweeps: float
) -> None:
    checked = 0
    for seed in range(300):
        sim = _scenario(seed, exactly_once, handler, sweeps)
        producer = sim.clients.producers.get("a")
        store = store_of(producer) if producer is not None else None
        for p in range(sim.size + 1):
            got = store.translate("t", 0, p) if store else None
            assert got == sim.truth(p), f"seed {seed}: position {p}: got {got}, truth {sim.truth(p)}"
            checked += got is not None
    assert checked > 10000  # the scenarios do cover positions


def test_syncs_stay_few_compared_with_records() -> None:
    sim = Simulation(random.Random(7), exactly_once=False, handler=False, size=5000)
    sim.kind = ["r"] * 5000
    sim.run_epoch(0, 600)
    producer = sim.clients.producers["a"]
    commits = len(producer.records)
    assert commits <= 600 * 0.4 * 1.5 + 2  # at most one frontier per commit, nothing per record
