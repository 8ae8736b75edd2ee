"""RecordHandler: KIP-3's message handler, a hook that filters or transforms records before they are produced.

Dropping a record is safe for offset translation: the offset syncs record the changed upstream/downstream delta.
"""

from __future__ import annotations

import importlib
from typing import Any, Protocol

from confluent_kafka import Message

Headers = Any  # list[tuple[str, bytes]] | None as consumed; the stubs' produce() accepts more shapes
OutRecord = tuple[bytes | None, bytes | None, Headers]  # key, value, headers


class RecordHandler(Protocol):
    """Return the record to produce (key, value, headers), or None to drop it."""

    def handle(self, msg: Message) -> OutRecord | None: ...


def load_handler(spec: str) -> RecordHandler | None:
    """Instantiate `module:Class` (or `module.Class`); empty means no handler."""
    if not spec:
        return None
    module_name, _, class_name = spec.partition(":") if ":" in spec else spec.rpartition(".")
    try:
        cls = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as exc:
        raise ValueError(f"record.handler.class: cannot load {spec!r}: {exc}") from None
    handler: RecordHandler = cls()
    return handler
