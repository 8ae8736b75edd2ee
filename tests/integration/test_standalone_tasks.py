"""The standalone runner with several tasks on a fresh target: every start succeeds, whichever task is first."""

from __future__ import annotations

import signal
import subprocess
import uuid
from collections import defaultdict
from functools import partial
from pathlib import Path

import pytest

from bench.procs import process_tree
from tests.support.kafka import consume_to_end, create_topic, end_offsets, unique_topic, wait_until
from tests.support.replication import produce_known, record_value, start_replicator

pytestmark = [pytest.mark.kafka, pytest.mark.compat]
REPO = Path(__file__).resolve().parents[2]
PARTITIONS, RECORDS, TASKS = 8, 4_000, 4


def _config(path: Path, source: str, target: str, src: str, dst: str, topic: str) -> Path:
    # Fresh aliases: a target that has never seen this source (no positions topic, no remote topics), and the
    # side emitters on, so every internal topic (positions, offset syncs, checkpoints, heartbeats) is new.
    path.write_text(
        f"clusters = {source}, {target}\n"
        f"{source}.bootstrap.servers = {src}\n"
        f"{target}.bootstrap.servers = {dst}\n"
        f"{source}->{target}.enabled = true\n"
        f"{source}->{target}.topics = {topic}\n"
        f"tasks.max = {TASKS}\n"
        "offset.flush.interval.ms = 200\n"
    )
    return path


def _arrived(proc: subprocess.Popen[bytes], dst: str, remote: str) -> bool:
    """Every record is at the target, or the runner exited (the caller's assertion reports that)."""
    if proc.poll() is not None:
        return True
    try:
        return sum(end_offsets(dst, remote, range(PARTITIONS)).values()) >= RECORDS
    except Exception:  # the remote topic does not exist yet
        return False


def _assert_copied(dst: str, remote: str, label: str) -> None:
    """The remote topic holds every source record, by bytes, in order, in its partition."""
    by_partition: dict[int, list[bytes]] = defaultdict(list)
    for msg in consume_to_end(dst, remote, PARTITIONS):
        by_partition[msg.partition() or 0].append(msg.value() or b"")
    for p in range(PARTITIONS):
        expected = [record_value(p, seq) for seq in range(RECORDS // PARTITIONS)]
        assert by_partition[p] == expected, f"{label}, partition {p}: records differ from the source"


def _error_lines(log: str) -> list[str]:
    return [line for line in log.splitlines() if " ERROR " in line or "Traceback" in line]


def test_four_tasks_start_on_a_fresh_target_five_times_in_a_row(kafka_clusters: dict[str, str], tmp_path: Path) -> None:
    src, dst = kafka_clusters["us-west"], kafka_clusters["us-east"]
    for run in range(5):
        uid = uuid.uuid4().hex[:8]
        source, target = f"src{uid}", f"dst{uid}"
        topic = unique_topic("fresh")
        create_topic(src, topic, partitions=PARTITIONS)
        produce_known(src, topic, PARTITIONS, RECORDS)
        config = _config(tmp_path / f"run{run}.properties", source, target, src, dst, topic)
        log_path = tmp_path / f"run{run}.log"
        proc = start_replicator(config, log_path)
        remote = f"{source}.{topic}"

        try:
            wait_until(
                partial(_arrived, proc, dst, remote),
                timeout=90,
                interval=0.5,
                what=f"run {run}: {RECORDS} records at the target",
            )
            assert proc.poll() is None, f"run {run}: the runner exited early:\n{log_path.read_text()[-3000:]}"
        finally:
            proc.send_signal(signal.SIGTERM)
            code = proc.wait(timeout=60)
        log = log_path.read_text()
        assert code == 0, f"run {run}: exit code {code}:\n{log[-3000:]}"
        assert _error_lines(log) == [], f"run {run}: ERROR lines:\n" + "\n".join(_error_lines(log)[:20])
        _assert_copied(dst, remote, f"run {run}")


def test_a_backslash_that_a_properties_file_swallowed_is_warned_about_in_the_log(
    kafka_clusters: dict[str, str], tmp_path: Path
) -> None:
    # Java properties rules turn `\d` into `d`: `prefix-\d+` arrives as `prefix-d+` and matches nothing.
    src, dst = kafka_clusters["us-west"], kafka_clusters["us-east"]
    uid = uuid.uuid4().hex[:8]
    prefix = f"nomatch{uid}"
    create_topic(src, f"{prefix}-1", partitions=1)
    config = _config(tmp_path / "typo.properties", f"src{uid}", f"dst{uid}", src, dst, prefix + r"-\d+")
    log_path = tmp_path / "typo.log"
    proc = start_replicator(config, log_path)
    try:
        wait_until(
            lambda: proc.poll() is not None or "matches no source topic" in log_path.read_text(),
            timeout=60,
            interval=0.5,
            what="the warning in the log",
        )
        assert proc.poll() is None, log_path.read_text()[-3000:]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    warnings = [line for line in log_path.read_text().splitlines() if "matches no source topic" in line]
    assert warnings and f"topics = {prefix}-d+" in warnings[0] and "backslash twice" in warnings[0], warnings
    assert len(warnings) <= TASKS, "logged once per task, not on every refresh"


def _stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()  # state, ppid, ...


def _running(pid: int) -> bool:
    fields = _stat(pid)
    return fields is not None and fields[0] != "Z"


def test_a_sigkilled_runner_takes_every_task_process_along(kafka_clusters: dict[str, str], tmp_path: Path) -> None:
    # Tasks left running after their runner died would replicate on as duplicates beside the runner's restart.
    src, dst = kafka_clusters["us-west"], kafka_clusters["us-east"]
    uid = uuid.uuid4().hex[:8]
    topic = unique_topic("orphans")
    create_topic(src, topic, partitions=PARTITIONS)
    produce_known(src, topic, PARTITIONS, RECORDS)
    config = _config(tmp_path / "kill.properties", f"src{uid}", f"dst{uid}", src, dst, topic)
    log_path = tmp_path / "kill.log"
    proc = start_replicator(config, log_path)
    remote = f"src{uid}.{topic}"
    try:
        wait_until(
            partial(_arrived, proc, dst, remote), timeout=90, interval=0.5, what=f"{RECORDS} records at the target"
        )
        assert proc.poll() is None, log_path.read_text()[-3000:]
        tasks = process_tree(proc.pid) - {proc.pid}
        assert len(tasks) >= TASKS, f"{len(tasks)} processes under the runner, expected its {TASKS} tasks at least"
    finally:
        proc.kill()
        proc.wait(timeout=30)
    wait_until(
        lambda: not any(_running(pid) for pid in tasks), timeout=30, interval=0.2, what="every task process gone"
    )


def test_flows_sharing_processes_replicate_every_record_and_stop_cleanly(
    kafka_clusters: dict[str, str], tmp_path: Path
) -> None:
    # Three flows of two tasks each (six tasks) on two processes: each process runs three tasks as threads.
    src, dst = kafka_clusters["us-west"], kafka_clusters["us-east"]
    uid = uuid.uuid4().hex[:8]
    sources = [f"s{i}x{uid}" for i in range(3)]
    topics = [unique_topic(f"shared{i}") for i in range(3)]
    lines = [f"clusters = {', '.join(sources)}, dst{uid}", f"dst{uid}.bootstrap.servers = {dst}", "tasks.max = 2"]
    for source, topic in zip(sources, topics, strict=True):
        create_topic(src, topic, partitions=PARTITIONS)
        produce_known(src, topic, PARTITIONS, RECORDS)
        lines += [f"{source}.bootstrap.servers = {src}", f"{source}->dst{uid}.enabled = true"]
        lines += [f"{source}->dst{uid}.topics = {topic}"]
    config = tmp_path / "shared.properties"
    config.write_text("\n".join([*lines, "offset.flush.interval.ms = 200"]) + "\n")
    log_path = tmp_path / "shared.log"
    proc = start_replicator(config, log_path, "--processes", "2")
    remotes = [f"{source}.{topic}" for source, topic in zip(sources, topics, strict=True)]
    try:
        for remote in remotes:
            wait_until(partial(_arrived, proc, dst, remote), timeout=90, interval=0.5, what=f"{remote} copied")
        assert proc.poll() is None, log_path.read_text()[-3000:]
        # The runner, the fork server (and its resource tracker), and two task processes: not six.
        tree = process_tree(proc.pid)
        assert 3 <= len(tree) <= 5, f"{len(tree)} processes in the runner's tree"
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
    log = log_path.read_text()
    assert code == 0, log[-3000:]
    assert _error_lines(log) == [], "\n".join(_error_lines(log)[:20])
    for source in sources:  # each task's lines name it, as with a process per task
        for task_id in (0, 1):
            assert f"task {source}->dst{uid}/{task_id} INFO" in log, f"no log line of {source} task {task_id}"
    for remote in remotes:
        _assert_copied(dst, remote, remote)
