"""Record handlers for tests, loadable by name (`record.handler.class = tests.support.handlers:...`)."""

from __future__ import annotations

import zlib
from typing import Any


def dropped_by_value(value: bytes | None) -> bool:
    """About every third record, chosen by its value: the same records on every run, anywhere in a partition."""
    return value is not None and zlib.crc32(value) % 3 == 0


class DropEveryThirdByValue:
    """Drops the records `dropped_by_value` picks and copies the others unchanged."""

    def handle(self, msg: Any) -> tuple[bytes | None, bytes | None, Any] | None:
        value = msg.value()
        if dropped_by_value(value):
            return None
        return msg.key(), value, msg.headers()
