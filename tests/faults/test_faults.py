"""Fault injection: brokers killed or frozen, the replicator killed mid-transaction, the target topic deleted,
an oversized record. Each asserts 0 lost (and, exactly once, 0 duplicated) records, and that the task reports
the fault while it lasts."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import KafkaException, Producer

from localkafka import LocalKafka
from replication.config import ClusterConfig, FlowConfig
from replication.errors import ReplicationError
from replication.metrics.registry import MetricsRegistry
from replication.task.replicationtask import ReplicationTask
from tests.support.kafka import admin, consume_to_end, create_topic, end_offsets, unique_topic, wait_until
from tests.support.replication import produce_known, record_value

pytestmark = [pytest.mark.kafka, pytest.mark.slow]
REPO = Path(__file__).resolve().parents[2]
PARTITIONS = 2


def _flow(clusters: dict[str, str], topic: str, **overrides: Any) -> FlowConfig:
    return FlowConfig(
        ClusterConfig("src", {"bootstrap.servers": clusters["src"]}),
        ClusterConfig("dst", {"bootstrap.servers": clusters["dst"]}),
        topics=(topic,),
        refresh_topics_interval_seconds=1,
        offset_flush_interval_ms=200,
        emit_heartbeats_enabled=False,
        emit_checkpoints_enabled=False,
        **overrides,
    )


class Supervisor:
    """Runs a task like the control plane does: a task that stops with an error is started again."""

    def __init__(self, flow: FlowConfig) -> None:
        self.flow = flow
        self.metrics = MetricsRegistry()
        self.errors: list[str] = []
        self.task = self._new()
        self.task.start()
        self.started = True

    def _new(self) -> ReplicationTask:
        task = ReplicationTask(self.flow, metrics=self.metrics)
        task.stall_seconds = 3
        return task

    def _start_again(self) -> None:
        """A start can fail too (the broker it needs is down): like the control plane, try again on the next step."""
        self.task = self._new()
        try:
            self.task.start()
            self.started = True
        except KafkaException as exc:
            self.errors.append(f"start failed: {exc.args[0]}")
            self.task.close()
            self.started = False

    def step(self) -> None:
        if not self.started:
            self._start_again()
            return
        try:
            self.task.run_once()
        except ReplicationError as exc:
            self.errors.append(str(exc))
            self.task.close()
            self._start_again()

    def fault(self) -> str | None:
        tasks = self.metrics.snapshot()["flows"].get(self.flow.name, {}).get("tasks", {})
        status = tasks.get("0") or tasks.get(0) or {}
        return status.get("fault")

    def until(self, condition: Callable[[], bool], timeout: float = 120, what: str = "") -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            assert time.monotonic() < deadline, f"timed out: {what}; errors: {self.errors[-3:]}"
            self.step()


def _total(bootstrap: str, topic: str) -> int:
    try:
        return sum(end_offsets(bootstrap, topic, range(PARTITIONS)).values())
    except Exception:
        return 0


def _assert_complete(bootstrap: str, remote: str, count: int, exactly_once: bool = False) -> None:
    isolation = "read_committed" if exactly_once else "read_uncommitted"
    records = consume_to_end(bootstrap, remote, PARTITIONS, isolation=isolation)
    expected = {record_value(p, seq) for p in range(PARTITIONS) for seq in range(count // PARTITIONS)}
    values = [m.value() for m in records]
    assert set(values) == expected, f"{len(expected - set(values))} records lost"
    if exactly_once:
        assert len(values) == len(expected), f"{len(values) - len(expected)} duplicates"


@pytest.mark.parametrize("broker", ["src", "dst"])
def test_a_sigkilled_broker_is_reported_and_nothing_is_lost_after_restart(
    fault_kafka: LocalKafka, fault_clusters: dict[str, str], broker: str
) -> None:
    topic, count = unique_topic(f"kill-{broker}"), 40_000
    create_topic(fault_clusters["src"], topic, PARTITIONS)
    produce_known(fault_clusters["src"], topic, PARTITIONS, count)
    supervisor = Supervisor(_flow(fault_clusters, topic))
    supervisor.task.batch_size = 500
    remote = f"src.{topic}"
    supervisor.until(lambda: _total(fault_clusters["dst"], remote) >= 5000, what="replication under way")
    os.kill(fault_kafka.broker_pid(broker), signal.SIGKILL)
    supervisor.until(lambda: supervisor.fault() is not None, timeout=60, what="the fault reported")
    fault_kafka.restart_broker(broker)
    supervisor.until(
        lambda: _total(fault_clusters["dst"], remote) >= count and supervisor.fault() is None,
        timeout=180,
        what="catch-up and the fault cleared",
    )
    supervisor.task.close()
    _assert_complete(fault_clusters["dst"], remote, count)


def test_a_broker_frozen_for_30_seconds_is_reported_and_nothing_is_lost(
    fault_kafka: LocalKafka, fault_clusters: dict[str, str]
) -> None:
    topic, count = unique_topic("freeze"), 20_000
    create_topic(fault_clusters["src"], topic, PARTITIONS)
    produce_known(fault_clusters["src"], topic, PARTITIONS, count)
    supervisor = Supervisor(_flow(fault_clusters, topic))
    supervisor.task.batch_size = 200
    remote = f"src.{topic}"
    supervisor.until(lambda: _total(fault_clusters["dst"], remote) >= 2000, what="replication under way")
    pid = fault_kafka.broker_pid("dst")
    os.kill(pid, signal.SIGSTOP)
    frozen_at = time.monotonic()
    try:
        supervisor.until(lambda: supervisor.fault() is not None, timeout=25, what="the stall reported")
        reported = supervisor.fault()
        supervisor.until(lambda: time.monotonic() - frozen_at >= 30, timeout=40, what="30 s frozen")
    finally:
        os.kill(pid, signal.SIGCONT)
    # Whichever symptom shows first: records unacknowledged, or the metadata refresh timing out.
    assert reported is not None and ("acknowledged" in reported or "Timed out" in reported), reported
    supervisor.until(
        lambda: _total(fault_clusters["dst"], remote) >= count and supervisor.fault() is None,
        timeout=180,
        what="catch-up after SIGCONT",
    )
    supervisor.task.close()
    _assert_complete(fault_clusters["dst"], remote, count)


def test_deleting_the_target_topic_mid_run_is_reported_and_everything_is_replicated_again(
    fault_clusters: dict[str, str],
) -> None:
    topic, count = unique_topic("deltarget"), 10_000
    create_topic(fault_clusters["src"], topic, PARTITIONS)
    produce_known(fault_clusters["src"], topic, PARTITIONS, count)
    supervisor = Supervisor(_flow(fault_clusters, topic))
    supervisor.task.batch_size = 200
    remote = f"src.{topic}"
    supervisor.until(lambda: _total(fault_clusters["dst"], remote) >= 3000, what="replication under way")
    client = admin(fault_clusters["dst"])
    client.delete_topics([remote])[remote].result(timeout=30)
    supervisor.until(
        lambda: any("deleted" in e for e in supervisor.errors) or "recreated" in (supervisor.fault() or ""),
        timeout=120,
        what="the deletion reported",
    )
    supervisor.until(lambda: _total(fault_clusters["dst"], remote) >= count, timeout=180, what="re-replication")
    supervisor.task.close()
    _assert_complete(fault_clusters["dst"], remote, count)


def test_a_record_larger_than_the_target_allows_stops_the_task_with_a_clear_error_and_skips_nothing(
    fault_clusters: dict[str, str],
) -> None:
    topic = unique_topic("toolarge")
    create_topic(fault_clusters["src"], topic, 1, config={"max.message.bytes": "2000000"})
    producer = Producer({"bootstrap.servers": fault_clusters["src"], "message.max.bytes": 3_000_000})
    for i in range(10):
        producer.produce(topic, b"x" * (1_500_000 if i == 5 else 100), f"k{i}".encode(), 0)
    assert producer.flush(30) == 0
    remote = f"src.{topic}"
    create_topic(fault_clusters["dst"], remote, 1, config={"max.message.bytes": "1000000"})
    task = ReplicationTask(_flow(fault_clusters, topic, sync_topic_configs_enabled=False), metrics=MetricsRegistry())
    task.start()
    with pytest.raises(ReplicationError, match=r"(?i)message size too large"):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            task.run_once()
    task.close()
    assert task.states[(topic, 0)].stored_next <= 5, "the position never passes the record that was not copied"
    values = [m.value() for m in consume_to_end(fault_clusters["dst"], remote, 1)]
    assert all(len(v) == 100 for v in values) and len(values) <= 5


def test_a_replicator_sigkilled_inside_an_open_transaction_leaves_no_duplicate_and_no_gap(
    fault_clusters: dict[str, str], tmp_path: Path
) -> None:
    topic, count = unique_topic("opentxn"), 30_000
    create_topic(fault_clusters["src"], topic, PARTITIONS)
    feeder = threading.Thread(target=_produce_slowly, args=(fault_clusters["src"], topic, count), daemon=True)
    feeder.start()
    config = tmp_path / "mm2.properties"
    config.write_text(
        f"clusters = src, dst\nsrc.bootstrap.servers = {fault_clusters['src']}\n"
        f"dst.bootstrap.servers = {fault_clusters['dst']}\nsrc->dst.enabled = true\nsrc->dst.topics = {topic}\n"
        "src->dst.exactly.once = true\nsrc->dst.emit.heartbeats.enabled = false\n"
        "src->dst.emit.checkpoints.enabled = false\n"
        # Long transactions, so that the kill lands inside one.
        "transaction.boundary.interval.ms = 4000\n"
    )
    remote = f"src.{topic}"

    def start() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [sys.executable, "-m", "replication", "run", "--config", str(config)],
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    proc = start()

    def transaction_open() -> bool:  # records in the target's log that read_committed does not see yet
        logged = _total(fault_clusters["dst"], remote)
        return logged > 0 and logged > len(consume_to_end(fault_clusters["dst"], remote, PARTITIONS, "read_committed"))

    wait_until(transaction_open, timeout=60, interval=0.2, what="an open transaction")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc = start()
    try:
        wait_until(
            lambda: len(consume_to_end(fault_clusters["dst"], remote, PARTITIONS, "read_committed")) >= count,
            timeout=120,
            interval=1,
            what="all records committed",
        )
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
    feeder.join(60)
    _assert_complete(fault_clusters["dst"], remote, count, exactly_once=True)


def _produce_slowly(bootstrap: str, topic: str, count: int, chunk: int = 1000) -> None:
    """count records in chunks spread over several seconds, so transactions are open while they arrive."""
    for start in range(0, count, chunk):
        produce_known(bootstrap, topic, PARTITIONS, chunk, start=start)
        time.sleep(0.2)  # pacing of the feed, not a wait for a condition


def test_exactly_once_survives_a_sigkilled_target_broker_with_no_duplicates(
    fault_kafka: LocalKafka, fault_clusters: dict[str, str]
) -> None:
    topic, count = unique_topic("eos-kill"), 20_000
    create_topic(fault_clusters["src"], topic, PARTITIONS)
    produce_known(fault_clusters["src"], topic, PARTITIONS, count)
    supervisor = Supervisor(_flow(fault_clusters, topic, exactly_once=True))
    supervisor.task.batch_size = 500
    remote = f"src.{topic}"
    supervisor.until(lambda: _total(fault_clusters["dst"], remote) >= 4000, what="replication under way")
    os.kill(fault_kafka.broker_pid("dst"), signal.SIGKILL)
    supervisor.until(lambda: supervisor.fault() is not None or bool(supervisor.errors), timeout=60, what="fault")
    fault_kafka.restart_broker("dst")
    committed = lambda: len(consume_to_end(fault_clusters["dst"], remote, PARTITIONS, "read_committed"))  # noqa: E731
    supervisor.until(lambda: committed() >= count, timeout=180, what="all records committed")
    supervisor.task.close()
    _assert_complete(fault_clusters["dst"], remote, count, exactly_once=True)
