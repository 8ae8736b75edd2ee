"""The demo's Celery broker: kombu's filesystem transport, with message files that appear whole.

kombu writes a message by creating ``<time>_<uuid>.<queue>.msg`` and then writing into it; its advisory lock does not
stop a consumer, which lists the folder, moves the file and reads it. A consumer that came between the create and
the write read an empty file, and the worker's main process died on the JSONDecodeError ("Unrecoverable error"),
so nothing ran any more: seen in ``make demo`` with web, worker and beat sending every few seconds (kombu issue
#1551). Here a message is written under a name no consumer reads and renamed into place, which is atomic within one
directory: a consumer sees no file or the whole message.
"""

from __future__ import annotations

import itertools
import os
import uuid
from time import monotonic_ns
from typing import Any

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps

_SENT = itertools.count()


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


class Transport(filesystem.Transport):
    Channel = Channel
