"""ReplicationTask: copies a set of source partitions to the target cluster, at least once or exactly once."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, TopicPartition
from confluent_kafka.admin import AdminClient

from replication.config import FlowConfig
from replication.errors import LEADER_NOT_READY, AclRefusedError, ReplicationError, missing_acl
from replication.kafka import positions
from replication.kafka.clients import ClientFactory, consumer_config, position_reader_config
from replication.kafka.internaltopics import COMPACTED_CONFIG, ensure_topic
from replication.kafka.topicsync import TopicSync
from replication.metrics.registry import REGISTRY, MetricsRegistry
from replication.mm2.filters import nothing_matched
from replication.offsets.partitionstate import PartitionState, TaskListener, TaskListeners
from replication.offsets.syncs import OffsetSyncEmitter
from replication.task.committing import PositionCommitter
from replication.task.context import TaskContext
from replication.task.dataloss import check_start, loss_on_out_of_range
from replication.task.handlers import RecordHandler, load_handler
from replication.task.ownership import hashed_owner
from replication.task.producing import BatchProducer
from replication.task.resume import Window
from replication.task.starting import Resumer, plan_start, report_start, source_watermarks, target_end_offsets

if TYPE_CHECKING:
    from replication.facts.writer import FactsWriter

DENIED_REFRESH_SECONDS = 2.0  # how soon a refused fetch is looked into
log = logging.getLogger(__name__)
TopicPartitionKey = tuple[str, int]


def _client_error(exc: BaseException) -> str:
    """The KafkaError text behind a confluent-kafka exception (callbacks wrap it in SystemError)."""
    cause = exc.__cause__ if isinstance(exc, SystemError) and exc.__cause__ is not None else exc
    if isinstance(cause, KafkaException) and cause.args:
        error = cause.args[0]
        return str(error.str()) if isinstance(error, KafkaError) else str(error)
    return str(cause)


@dataclass(frozen=True)
class Started:
    """What a task builds when it starts: its clients and the collaborators that use them."""

    source_admin: AdminClient
    target_admin: AdminClient
    topic_sync: TopicSync
    consumer: Consumer
    producer: BatchProducer
    committer: PositionCommitter
    resumer: Resumer


class NotStartedError(RuntimeError):
    """A task asked for what only its start builds (its clients, its collaborators)."""


class ReplicationTask:
    """One task of a flow: assigned source partitions, a producer to the target, and stored positions.

    Everything it has exists once it is built; what its start builds (clients, collaborators) is one ``Started``,
    None before the start.
    """

    def __init__(
        self,
        flow: FlowConfig,
        *,
        task_id: int = 0,
        owns: Callable[[str, int], bool] | None = None,
        clients: ClientFactory | None = None,
        metrics: MetricsRegistry = REGISTRY,
        handler: RecordHandler | None = None,
        sync_topics: bool = True,
        sync_configs: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
        provisioned: bool = False,
        listeners: Sequence[TaskListener] = (),
    ) -> None:
        self.context = TaskContext.create(flow, task_id, metrics, clients)
        self.flow = flow
        self.task_id = task_id
        self.owns = owns or hashed_owner(flow.tasks_max, task_id)
        self.clients = self.context.clients
        self.metrics = metrics
        self.faults = self.context.faults
        self.handler = handler or load_handler(flow.record_handler_class)
        self.sync_topics = sync_topics  # create remote topics and partitions for what this task replicates
        self.sync_configs = sync_topics if sync_configs is None else sync_configs  # also configs and ACLs
        self.clock = clock
        # True when the runner or controller created the flow's topics before starting its tasks
        # (replication.kafka.provisioning); a lone task creates its positions topic itself.
        self.provisioned = provisioned
        self.positions_topic = self.context.positions_topic
        self.batch_size = 10000
        # The longest wait for a first record when none is fetched. A record that arrives ends it at once, so it
        # costs no latency; it sets how often an idle task wakes: 25 ms took 0.3-0.6 % of a core more per task
        # (bench/README.md, idle CPU). Exactly once, from the first record on, a batch collects for up to
        # busy_poll_timeout (see _consume).
        self.poll_timeout = 0.25
        # While runs wait for their acknowledgement: their delivery reports are served between consume calls, and
        # the time they are served is what the task's latency figures read (librdkafka's own latency() is measured
        # then too). At 25 ms a 20 records/s demo flow read p50 47 ms for records a consumer of the target had after
        # 24 ms; at 2 ms it read 24.6 ms, for no measurable CPU (1.2 % of a core either way, bench/README.md).
        self.acking_poll_timeout = 0.002
        self.busy_poll_timeout = 0.005
        self._busy = False
        self.stall_seconds = 10.0  # target not acknowledging for this long is reported as a fault
        self._stored: dict[TopicPartitionKey, positions.Position] = {}
        self._stored_fresh = False  # whether _stored was read for the partitions about to be added
        self._next_refresh = self._next_flush = self._next_config_sync = 0.0
        self._refused: dict[str, str] = {}  # source topic -> why its partitions are hidden (an ACL the source refuses)
        self.listeners = list(listeners)  # told what the task made durable; the task adds its own at start
        self.offset_syncs: OffsetSyncEmitter | None = None
        self.facts: FactsWriter | None = None  # facts.lake: what this task replicated, for the analytics jobs
        self.started: Started | None = None
        self._consumer: Consumer | None = None  # closed by close(), also when the start failed after making it

    # -- lifecycle -----------------------------------------------------------------------------------
    def start(self) -> None:
        self.started = started = self._build()
        started.committer.init_transactions()  # fences any zombie before the positions are read
        if not self.provisioned:
            replication_factor = started.topic_sync.replication_factor
            ensure_topic(started.target_admin, self.positions_topic, COMPACTED_CONFIG, replication_factor)
        self._stored = positions.load(position_reader_config(self.flow, self.task_id), self.positions_topic)
        self._stored_fresh = True  # the refresh below starts its partitions on what was just read
        self.metrics.set_task_state(self.flow.name, self.task_id, "RUNNING")
        self.refresh()
        self._stored_fresh = False  # later refreshes read the positions again for what they add

    def _build(self) -> Started:
        """The clients and the collaborators; no request to a broker yet."""
        flow, context = self.flow, self.context
        source_admin = self.clients.admin(flow.source)
        target_admin = self.clients.admin(flow.target)
        self._consumer = consumer = self.clients.task_consumer(flow, self.task_id, error_cb=self.faults.source_error)
        if flow.emit_offset_syncs_enabled:
            self.offset_syncs = OffsetSyncEmitter(flow, consumer.position)
            self.listeners.append(self.offset_syncs)
        if flow.facts_lake:
            from replication.facts.writer import facts_writer  # pyarrow is loaded only when facts are on

            self.facts = facts_writer(flow, self.task_id, flow.facts_lake)
            self.listeners.append(self.facts)
        listener = TaskListeners(self.listeners)
        producer = BatchProducer(context, listener.run_acked)
        return Started(
            source_admin=source_admin,
            target_admin=target_admin,
            topic_sync=TopicSync(flow, source_admin, target_admin),
            consumer=consumer,
            producer=producer,
            committer=PositionCommitter(context, producer, consumer, listener),
            resumer=Resumer(context, listener.run_acked),
        )

    def _started(self) -> Started:
        if self.started is None:
            raise NotStartedError(f"{self.flow.name} task {self.task_id}: not started")
        return self.started

    @property
    def consumer(self) -> Consumer:
        """The task's source consumer; NotStartedError before the start."""
        return self._started().consumer

    @property
    def producer(self) -> BatchProducer:
        return self._started().producer

    @property
    def states(self) -> dict[TopicPartitionKey, PartitionState]:
        """Each assigned source partition's progress, as the task's committer holds it (none before start)."""
        return {} if self.started is None else self.started.committer.states

    def close(self) -> None:
        """Store every acknowledged position, then release the clients (also after a failed start).

        Best effort and never raising: after a fatal producer error nothing more can be written, and the
        positions already stored are behind every acknowledgement, so a restart re-copies a little, loses nothing.
        """
        started = self.started
        try:
            if started is not None and started.producer.failure is None:
                started.committer.store_final_positions()
        except (ReplicationError, KafkaException, SystemError) as exc:
            log.warning("%s task %d: positions not stored at close: %s", self.flow.name, self.task_id, exc)
        finally:
            if self.offset_syncs is not None:
                self.offset_syncs.close()
            if self.facts is not None:
                self.facts.close()  # after the final commit above, so its facts are written too
            if self._consumer is not None:
                self._consumer.close()

    def run(self, stopping: threading.Event) -> None:
        try:
            self.start()
            while not stopping.is_set():
                self.run_once()
            self.metrics.set_task_state(self.flow.name, self.task_id, "STOPPED")
        except Exception as exc:
            self.metrics.set_task_state(self.flow.name, self.task_id, "FAILED", str(exc))
            raise
        finally:
            self.close()

    # -- the loop ------------------------------------------------------------------------------------
    def run_once(self) -> bool:
        """Replicate one consumed batch; returns whether there was work.

        A fatal client error (e.g. the target lost the idempotent producer's state) stops the task as a
        ReplicationError: its restart resumes from the stored positions, which never pass an acknowledgement.
        """
        started = self._started()
        try:
            return self._run_once(started)
        except (KafkaException, SystemError) as exc:
            message = f"{self.flow.name} task {self.task_id}: {started.committer.fatal_detail() or _client_error(exc)}"
            if started.producer.refused is not None:
                raise AclRefusedError(message, started.producer.refused) from exc
            raise ReplicationError(message) from exc

    def _run_once(self, started: Started) -> bool:
        now = self.clock()
        if now >= self._next_refresh:
            self._refresh_or_report()
        if self.flow.exactly_once:
            started.committer.begin_transaction(now)
        msgs = self._consume(started)
        self._busy = bool(msgs)
        if msgs:
            started.committer.replicate(msgs, self.handler, self._consumer_error)
        started.producer.poll()
        if self.flow.exactly_once:
            started.committer.commit_when_due(now, full_batch=len(msgs) >= self.batch_size)
        elif now >= self._next_flush:
            started.committer.store_positions()
            self._next_flush = now + self.flow.offset_flush_interval_ms / 1000
            # The producer times acknowledgements on the monotonic clock, whatever clock the task was given.
            stalled = started.producer.stalled_for(time.monotonic())
            self.faults.check_stall(stalled, started.producer.outstanding, self.stall_seconds)
        return bool(msgs)

    def _consume(self, started: Started) -> list[Any]:
        if self.flow.exactly_once:
            # Wait for a batch: each transaction costs a blocking commit. Taking only what was fetched made commits
            # more frequent and raised exactly-once p90 from 16-17 to 25 ms at 20k records/s (bench/README.md).
            if self._busy:
                return started.consumer.consume(self.batch_size, self.busy_poll_timeout)
            return consume_collecting(started.consumer, self.batch_size, self.poll_timeout, self.busy_poll_timeout)
        timeout = self.acking_poll_timeout if started.producer.outstanding else self.poll_timeout
        return consume_available(started.consumer, self.batch_size, timeout)

    # -- assignment ----------------------------------------------------------------------------------
    def _refresh_or_report(self) -> None:
        """A metadata call that fails (broker down or frozen) is a fault to report, not a reason to stop."""
        try:
            self.refresh()
        except KafkaException as exc:
            self._next_refresh = self.clock() + 5.0
            self.faults.report(f"metadata refresh failed: {exc.args[0].str()}")

    def refresh(self) -> None:
        """Pick up new matching topics and partitions (no restart), and sync configs and ACLs when due."""
        started = self._started()
        now = self.clock()
        self._next_refresh = now + self.flow.refresh_topics_interval_seconds
        topics = started.topic_sync.source_topics()
        denied = self._denied([t for t in sorted({topic for topic, _ in self.states}) if t not in topics])
        self.faults.warn(denied or nothing_matched(self.flow, topics, started.topic_sync.listed))
        written = {state.topic for state in self.states.values() if state.last_downstream >= 0}
        remotes = started.topic_sync.remote_topics()  # one target listing for both checks below
        deleted = started.topic_sync.missing_remote_topics(sorted(written), remotes)
        if deleted:
            raise ReplicationError(
                f"{self.flow.name} task {self.task_id}: remote topics of {deleted} were deleted at the target; "
                "restart to re-replicate them from the source"
            )
        if self.sync_topics:
            started.topic_sync.ensure_remote_topics(topics, remotes)
            if self.sync_configs and now >= self._next_config_sync:
                self._sync_configs_and_acls(started.topic_sync, list(topics))
        new = [(t, p) for t, n in sorted(topics.items()) for p in range(n) if (t, p) not in self.states]
        assign = self._add_partitions([(t, p) for t, p in new if self.owns(t, p)])
        if assign:
            started.consumer.incremental_assign(assign)
            log.info("%s task %d: assigned %d partitions", self.flow.name, self.task_id, len(assign))

    def _sync_configs_and_acls(self, topic_sync: TopicSync, topics: list[str]) -> None:
        """Copy configs and ACLs when due. A cluster that does not answer in time is reported, and asked again at
        the next refresh: replication does not depend on it (it stopped a 10,000-partition flow's start)."""
        self._next_config_sync = self.clock() + self.flow.sync_topic_configs_interval_seconds
        try:
            if self.flow.sync_topic_configs_enabled:
                topic_sync.sync_configs(topics)
            if self.flow.sync_topic_acls_enabled:
                topic_sync.sync_acls(topics)
        except (KafkaException, TimeoutError) as exc:
            self._next_config_sync = self.clock()  # the next refresh tries again
            detail = exc.args[0].str() if isinstance(exc, KafkaException) else "no answer in time"
            self.faults.report(f"topic config and ACL sync failed: {detail}")

    def _watermarks(self, topic: str, partition: int, timeout: float = 30.0) -> tuple[int, int]:
        """Source log start and end; a partition just added may need a metadata refresh, or its leader a moment."""
        started = self._started()
        deadline = time.monotonic() + timeout
        while True:
            try:
                low, high = started.consumer.get_watermark_offsets(TopicPartition(topic, partition), timeout=10)
                return int(low), int(high)
            except KafkaException as exc:
                if exc.args[0].code() not in LEADER_NOT_READY or time.monotonic() > deadline:
                    raise
                started.consumer.list_topics(topic, timeout=10)
                time.sleep(0.2)

    def _add_partitions(self, keys: list[TopicPartitionKey]) -> list[TopicPartition]:
        """Start each partition where replication.task.starting says: one target end-offset call for all of them, and
        one verification of what crashed tasks left at the target after their stored positions."""
        started = self._started()
        if not keys:
            return []  # most refreshes: no metadata or offset requests for nothing
        if not self._stored_fresh:
            # A partition added after the start may have moved here from another task, which stored positions
            # since this task read them: starting it on the positions of this task's start re-copied it from the
            # source log start (the demo's tasks.max 3 -> 2 wrote 1,512 records of a partition twice).
            self._stored = positions.load(position_reader_config(self.flow, self.task_id), self.positions_topic)
        remotes = self._known_at_target({key: started.topic_sync.remote_topic(key[0]) for key in keys})
        keys = list(remotes)
        ends = target_end_offsets(started.target_admin, [(remote, key[1]) for key, remote in remotes.items()])
        read_committed = consumer_config(self.flow, self.task_id)["isolation.level"] == "read_committed"
        marks = source_watermarks(started.topic_sync.source, keys, read_committed)
        windows = [
            self._add_partition(key, remote, ends.get((remote, key[1])), marks.get(key))
            for key, remote in remotes.items()
        ]
        found = [window for window in windows if window is not None]
        if found:
            started.resumer.resume(found, self.states, lambda msg: started.producer.outgoing(msg, self.handler))
        started.committer.store_start_positions(keys, self._stored)
        return [TopicPartition(t, p, self.states[(t, p)].acked_next) for t, p in keys]

    def _known_at_target(self, remotes: dict[TopicPartitionKey, str]) -> dict[TopicPartitionKey, str]:
        """The partitions whose remote partition the producer knows, waiting up to 5 s for metadata to show them.

        A partition added to a source topic is added to its remote topic by whoever syncs topics (this task, task 0
        or the control plane's provisioning), and a producer whose metadata predates that fails at once with
        "Unknown partition", which stopped every task of a flow. A partition still unknown after the wait is left
        for the next refresh, with a log line that says so: the wait is short because the loop that renews a control
        plane task's lease may be the one waiting.
        """
        started = self._started()
        needed: dict[str, int] = {}
        for (_, partition), remote in remotes.items():
            needed[remote] = max(needed.get(remote, 0), partition + 1)
        deadline = time.monotonic() + 5
        while True:
            # One metadata request for every topic; its answer also updates the producer's own view of them.
            listed = started.producer.client.list_topics(timeout=10).topics
            short = {r for r, n in needed.items() if r not in listed or len(listed[r].partitions) < n}
            if not short or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        started.target_admin.list_topics(timeout=10)  # the end-offset call asks the leaders its client knows
        if short:
            log.warning(
                "%s task %d: %d remote topics lack partitions at the target (e.g. %s): their new partitions wait "
                "for the next refresh",
                self.flow.name,
                self.task_id,
                len(short),
                sorted(short)[0],
            )
        return {key: remote for key, remote in remotes.items() if key[1] < _count(listed, remote)}

    def _add_partition(
        self, key: TopicPartitionKey, remote: str, end: int | None, marks: tuple[int, int] | None
    ) -> Window | None:
        started = self._started()
        topic, partition = key
        low, high = marks if marks is not None else self._watermarks(topic, partition)
        stored = self._stored.get(key)
        start = check_start(self.flow, topic, partition, stored, low, high)
        self.faults.data_loss(start.loss, topic, partition)
        plan = plan_start(self.flow, topic, partition, remote, stored, start.offset, low, end)
        report_start(self.faults, plan, key, remote, start.offset)
        state = PartitionState(topic, partition, remote, acked_next=plan.offset, stored_next=plan.offset, hw=high)
        state.downstream_start = -1 if end is None else end
        started.committer.track(state)
        return plan.window

    def _denied(self, hidden: list[str]) -> str | None:
        """Why partitions this task copies are missing from the source's listing, when the source refuses the
        principal READ on their topic (a deleted topic is another matter, and not named here). The partitions
        stay assigned at their positions: when READ is granted again, they resume exactly there."""
        started = self._started()
        refused: dict[str, str] = {}
        for topic in hidden:
            found = started.consumer.list_topics(topic, timeout=5).topics.get(topic)
            error = found.error if found is not None else None
            reason = missing_acl(error, self.flow.source.alias, "READ", topic) if error is not None else None
            # A later metadata answer may leave the error out: a topic named once stays named while it is hidden.
            reason = reason or self._refused.get(topic)
            if reason is not None:
                refused[topic] = reason
        self._refused = refused
        return "; ".join(refused.values()) or None

    def _consumer_error(self, msg: Message) -> None:
        started = self._started()
        error = msg.error()
        topic, partition = msg.topic(), msg.partition()
        if error is None:
            return
        out_of_range = error.code() in (KafkaError.OFFSET_OUT_OF_RANGE, KafkaError._AUTO_OFFSET_RESET)
        if out_of_range and topic is not None and partition is not None and (topic, partition) in self.states:
            state = self.states[(topic, partition)]
            low, high = self._watermarks(topic, partition)
            loss = loss_on_out_of_range(self.flow, state, low, high)
            self.faults.data_loss(loss, topic, partition)
            resume = low if loss is None or loss.resume_at is None else loss.resume_at
            state.acked_next = state.stored_next = resume
            started.consumer.seek(TopicPartition(topic, partition, resume))
            return
        if error.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED:
            # The fetch error does not say which topic: the next refresh, soon, names it and keeps it named.
            self._next_refresh = min(self._next_refresh, self.clock() + DENIED_REFRESH_SECONDS)
        self.faults.report(f"source: {error.str()}")

    @property
    def stats(self) -> dict[str, Any]:
        return {f"{k[0]}-{k[1]}": (s.acked_next, s.stored_next, s.hw) for k, s in self.states.items()}


def _count(listed: dict[str, Any], topic: str) -> int:
    meta = listed.get(topic)
    return 0 if meta is None else len(meta.partitions)


def consume_available(consumer: Consumer, batch_size: int, timeout: float) -> list[Any]:
    """At most batch_size records: what the client has fetched already, else the first to arrive within timeout
    and what came with it. Never waits for a batch to fill: at a moderate rate, `consume(n, t)` holds every record
    until n arrived or t passed, which was most of at-least-once's latency (bench/README.md)."""
    msgs: list[Any] = consumer.consume(batch_size, 0)
    if msgs:
        return msgs
    msgs = consumer.consume(1, timeout)
    if msgs and batch_size > 1:
        msgs += consumer.consume(batch_size - 1, 0)
    return msgs


def consume_collecting(consumer: Consumer, batch_size: int, timeout: float, collect: float) -> list[Any]:
    """At most batch_size records: the first to arrive within timeout, then what else arrives within collect of
    it. An idle task waits long without holding its first record for the whole wait, as `consume(n, timeout)` did."""
    msgs: list[Any] = consumer.consume(1, timeout)
    if msgs and batch_size > 1:
        msgs += consumer.consume(batch_size - 1, collect)
    return msgs
