"""The replication facts lake on disk: Parquet files partitioned by date and hour, written off the hot path.

Layout, readable by Spark's partition discovery and by any Parquet reader:

    <lake>/facts/date=2026-11-22/hour=05/flow=us-west->us-east/part-<uuid>.parquet
    <lake>/heartbeats/date=2026-11-22/hour=05/cluster=us-east/part-<uuid>.parquet

`lake` is a local directory or a URI that pyarrow's filesystems understand (file://, s3://, hdfs://, gs://);
`s3a://`, the Hadoop spelling Spark uses for the same buckets, is accepted as `s3://`. Files are written under a
hidden name and then renamed, so a reader never sees half a file. No Spark here: the engine process imports this.
"""

from __future__ import annotations

import atexit
import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyarrow import fs as pafs

log = logging.getLogger(__name__)
Row = tuple[Any, ...]
HOUR_MS = 3_600_000


def filesystem(lake: str) -> tuple[pafs.FileSystem, str]:
    """The pyarrow filesystem and base path of a lake location."""
    if lake.startswith("s3a://"):
        lake = "s3://" + lake[len("s3a://") :]
    if "://" not in lake:
        return pafs.LocalFileSystem(), lake.rstrip("/") or "/"
    fs, path = pafs.FileSystem.from_uri(lake)
    return fs, path.rstrip("/")


def hour_partition(epoch_ms: int) -> tuple[str, str]:
    """(date, hour) of an epoch-millisecond time, in UTC: ('2026-11-22', '05')."""
    moment = datetime.fromtimestamp(epoch_ms / 1000, UTC)
    return moment.strftime("%Y-%m-%d"), moment.strftime("%H")


def write_rows(
    lake: str, table: str, schema: pa.Schema, rows: Sequence[Row], time_column: str, partition: tuple[str, str]
) -> list[str]:
    """Write rows (tuples in schema order) as one Parquet file per hour of time_column; returns the paths.

    `partition` is the innermost directory level, e.g. ('flow', 'us-west->us-east').
    """
    if not rows:
        return []
    fs, base = filesystem(lake)
    index = schema.get_field_index(time_column)
    by_hour: dict[int, list[Row]] = {}
    for row in rows:
        by_hour.setdefault(row[index] // HOUR_MS, []).append(row)
    written = []
    for hour, hour_rows in sorted(by_hour.items()):
        date, hh = hour_partition(hour * HOUR_MS)
        directory = f"{base}/{table}/date={date}/hour={hh}/{partition[0]}={partition[1]}"
        written.append(_write_file(fs, directory, _table(schema, hour_rows)))
    return written


def _table(schema: pa.Schema, rows: Sequence[Row]) -> pa.Table:
    columns = list(zip(*rows, strict=True))
    return pa.Table.from_arrays([pa.array(col, f.type) for col, f in zip(columns, schema, strict=True)], schema=schema)


def _write_file(fs: pafs.FileSystem, directory: str, table: pa.Table) -> str:
    name = f"part-{uuid.uuid4().hex}.parquet"
    fs.create_dir(directory, recursive=True)
    hidden = f"{directory}/.{name}.tmp"  # Spark and pyarrow datasets skip names starting with '.'
    pq.write_table(table, hidden, filesystem=fs, compression="snappy")
    fs.move(hidden, f"{directory}/{name}")
    return f"{directory}/{name}"


def register_flow(lake: str, name: str, source: str, target: str, heartbeat_interval_s: float) -> None:
    """Record a configured flow as `<lake>/flows/<source>__<target>.json` (one JSON object; idempotent)."""
    fs, base = filesystem(lake)
    fs.create_dir(f"{base}/flows", recursive=True)
    doc = {"flow": name, "source": source, "target": target, "heartbeat_interval_s": heartbeat_interval_s}
    hidden, final = f"{base}/flows/.{source}__{target}.{uuid.uuid4().hex}.tmp", f"{base}/flows/{source}__{target}.json"
    with fs.open_output_stream(hidden) as out:
        out.write(json.dumps(doc).encode())
    fs.move(hidden, final)


def prune(lake: str, older_than: datetime, tables: Sequence[str] = ("facts", "heartbeats")) -> int:
    """Delete every hour partition that ended before older_than; returns how many were removed (retention)."""
    fs, base = filesystem(lake)
    cutoff = older_than.astimezone(UTC).strftime("%Y-%m-%d/%H")
    removed = 0
    for table in tables:
        for date_dir in _subdirs(fs, f"{base}/{table}", "date="):
            for hour_dir in _subdirs(fs, date_dir, "hour="):
                stamp = f"{date_dir.rsplit('date=', 1)[1]}/{hour_dir.rsplit('hour=', 1)[1]}"
                if stamp < cutoff:
                    fs.delete_dir(hour_dir)
                    removed += 1
            if not _subdirs(fs, date_dir, "hour="):
                fs.delete_dir(date_dir)
    return removed


def _subdirs(fs: pafs.FileSystem, directory: str, prefix: str) -> list[str]:
    try:
        infos = fs.get_file_info(pafs.FileSelector(directory, allow_not_found=True))
    except FileNotFoundError:  # removed by a concurrent prune
        return []
    return sorted(i.path for i in infos if i.type == pafs.FileType.Directory and i.base_name.startswith(prefix))


class LakeSink:
    """Buffers rows in memory and writes them from a background thread every `interval` s or `max_rows` rows.

    `add` is all the caller's thread does: one list append under a lock. A failed write is logged and retried at
    the next flush (the rows stay buffered, up to `max_buffered` rows, then the oldest are dropped and counted).
    """

    def __init__(
        self,
        lake: str,
        table: str,
        schema: pa.Schema,
        time_column: str,
        partition: tuple[str, str],
        interval: float = 5.0,
        max_rows: int = 100_000,
        retention_hours: float | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.lake, self.table, self.schema = lake, table, schema
        self.time_column, self.partition = time_column, partition
        self.interval, self.max_rows, self.max_buffered = interval, max_rows, 20 * max_rows
        self.retention_hours = retention_hours
        self.clock = clock
        self.dropped = 0
        self.files_written = 0
        self._rows: list[Row] = []
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._closed = threading.Event()
        self._next_prune = 0.0
        self._thread = threading.Thread(target=self._loop, name=f"facts-{table}-{partition[1]}", daemon=True)
        self._thread.start()
        atexit.register(self.close)

    def add(self, row: Row) -> None:
        with self._lock:
            self._rows.append(row)
            full = len(self._rows) >= self.max_rows
        if full:
            self._wake.set()

    def extend(self, rows: Sequence[Row]) -> None:
        with self._lock:
            self._rows.extend(rows)
            full = len(self._rows) >= self.max_rows
        if full:
            self._wake.set()

    def close(self, timeout: float = 30.0) -> None:
        """Write what is buffered and stop the thread (idempotent; also runs at interpreter exit)."""
        if self._closed.is_set():
            return
        self._closed.set()
        self._wake.set()
        self._thread.join(timeout)
        atexit.unregister(self.close)

    def _loop(self) -> None:
        while not self._closed.is_set():
            self._wake.wait(self.interval)
            self._wake.clear()
            self.flush()
        self.flush()

    def flush(self) -> None:
        with self._lock:
            rows, self._rows = self._rows, []
        if not rows:
            return
        try:
            paths = write_rows(self.lake, self.table, self.schema, rows, self.time_column, self.partition)
            self.files_written += len(paths)
        except Exception:  # the lake is down or full: keep the rows for the next attempt, never fail the task
            log.exception("writing %d %s rows to %s failed; will retry", len(rows), self.table, self.lake)
            self._requeue(rows)
        self._maybe_prune()

    def _requeue(self, rows: list[Row]) -> None:
        with self._lock:
            self._rows[:0] = rows
            excess = len(self._rows) - self.max_buffered
            if excess > 0:
                del self._rows[:excess]
                self.dropped += excess
                log.error("facts buffer full: dropped %d %s rows (%d in total)", excess, self.table, self.dropped)

    def _maybe_prune(self) -> None:
        now = self.clock()
        if self.retention_hours is None or now < self._next_prune:
            return
        self._next_prune = now + 600
        cutoff = datetime.fromtimestamp(now - self.retention_hours * 3600, UTC)
        try:
            removed = prune(self.lake, cutoff, (self.table,))
        except OSError:
            log.exception("pruning %s in %s failed", self.table, self.lake)
            return
        if removed:
            log.info("retention: removed %d hour partitions of %s older than %s", removed, self.table, cutoff)
