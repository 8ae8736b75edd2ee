"""The demo's Celery broker: kombu's filesystem transport, with message files that appear whole.

kombu writes a message by creating ``<time>_<uuid>.<queue>.msg`` and then writing into it; its advisory lock does not
stop a consumer, which lists the folder, moves the file and reads it. A consumer that came between the create and
the write read an empty file, and the worker's main process died on the JSONDecodeError ("Unrecoverable error"),
so nothing ran any more: seen in ``make demo`` with web, worker and beat sending every few seconds (kombu issue
#1551). Here a message is written under a name no consumer reads and renamed into place, which is atomic within one
directory: a consumer sees no file or the whole message.

The exchange's table of bound queues, in the control folder, had the same race and a worse one: kombu creates the
table with ``open("wb")``, which empties it before the lock is taken. A process declaring its queues at that moment
read an empty table and died on the JSONDecodeError, or wrote its own binding over another's, and messages for the lost
queue went nowhere. Here every change to a table is made under a lock file beside it and lands by rename.

Within one process kombu keeps the bindings of all its connections in one state, and records a binding there before
it writes the table. A second thread declaring the same queue saw it bound, published before the table had it, and
kombu routed the message to its dead-letter queue with a warning: a lost task when two web requests queue the
first jobs at once. Here a process binds one queue at a time, so a binding it has recorded is in the table.
"""

from __future__ import annotations

import fcntl
import itertools
import os
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from time import monotonic_ns
from typing import Any

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps, loads

Table = list[filesystem.exchange_queue_t]

_SENT = itertools.count()
_BINDING = threading.Lock()


class Channel(filesystem.Channel):
    def _put(self, queue: str, payload: dict[str, Any], **kwargs: Any) -> None:  # type: ignore[override]  # as kombu's filesystem Channel's
        # Consumers take files in name order. The clock, zero-padded, and this process's own count keep one sender's
        # messages in order: two messages within one millisecond used to be ordered by their random uuid.
        name = f"{monotonic_ns():020d}{next(_SENT):012d}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = os.path.join(self.data_folder_out, f".{name}.partial")  # no consumer reads these
        try:
            with open(partial, "wb") as f:
                f.write(str_to_bytes(dumps(payload)))
            os.replace(partial, final)
        except OSError as exc:
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc

    def queue_bind(
        self,
        queue: str,
        exchange: str | None = None,
        routing_key: str = "",
        arguments: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        with _BINDING:
            super().queue_bind(queue, exchange, routing_key, arguments, **kwargs)

    def get_table(self, exchange: str) -> Table:  # type: ignore[override]  # as kombu's filesystem Channel's
        file = self._table_file(exchange)
        try:
            rows = loads(file.read_bytes())
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise ChannelError(f"Cannot open {file}") from exc
        return [filesystem.exchange_queue_t(*row) for row in rows]

    def _queue_bind(self, exchange: str, routing_key: str, pattern: str | None, queue: str) -> None:
        entry = filesystem.exchange_queue_t(routing_key or "", pattern or "", queue or "")
        self._change_table(exchange, lambda rows: rows if entry in rows else [entry, *rows])

    def _delete(self, queue: str, exchange: str, routing_key: str, pattern: str, *args: Any, **kwargs: Any) -> None:
        super(filesystem.Channel, self)._delete(queue, exchange, routing_key, pattern, *args, **kwargs)
        entry = filesystem.exchange_queue_t(routing_key or "", pattern or "", queue or "")
        self._change_table(exchange, lambda rows: [row for row in rows if row != entry])

    def _table_file(self, exchange: str) -> Path:
        """kombu's own path for the table, with its checks of the exchange's name."""
        file: Path = self._exchange_file(exchange)  # type: ignore[attr-defined]  # kombu 5.7's, not in celery-types' stubs
        return file

    def _change_table(self, exchange: str, change: Callable[[Table], Table]) -> None:
        """Read, change and replace the exchange's table while holding its lock file, so no change is lost."""
        file = self._table_file(exchange)
        try:
            file.parent.mkdir(parents=True, exist_ok=True)
            with open(file.with_name(f"{file.name}.lock"), "a") as guard:
                fcntl.flock(guard, fcntl.LOCK_EX)
                try:
                    rows = self.get_table(exchange)
                    changed = change(rows)
                    if changed != rows:
                        partial = file.with_name(f".{file.name}.{uuid.uuid4().hex}.partial")
                        partial.write_bytes(str_to_bytes(dumps(changed)))
                        os.replace(partial, file)
                finally:
                    fcntl.flock(guard, fcntl.LOCK_UN)
        except OSError as exc:
            raise ChannelError(f"Cannot change {file}") from exc


class Transport(filesystem.Transport):
    Channel = Channel
