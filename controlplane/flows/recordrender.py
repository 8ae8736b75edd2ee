"""How a record's key, value and header values are shown: text, pretty JSON or hex, cut at SHOWN_LIMIT characters
with the full size stated, or only their size for a role that may not see record contents.

Pure functions of bytes: no Kafka, no Django.
"""

from __future__ import annotations

import json
from typing import Any, Literal

TEXT, JSON, HEX = "text", "json", "hex"
RENDERS = (TEXT, JSON, HEX)
Render = Literal["text", "json", "hex"]
SHOWN_LIMIT = 4096  # characters of a rendering shown; the size always states the whole
# JSON is parsed only up to this size: a larger value is shown as text, and its first SHOWN_LIMIT characters are
# all anyone reads of it anyway.
JSON_PARSE_LIMIT = 1 << 20
Rendered = dict[str, Any]


def rendered(data: bytes | None, render: Render, contents: bool) -> Rendered | None:
    """``{"size", "format", "shown", "truncated"}`` for bytes, None for a null key, value or header value.

    ``format`` is what was used: JSON that does not parse is shown as text, bytes that are not UTF-8 as hex.
    Without ``contents`` only the size is given: ``format`` and ``shown`` are null."""
    if data is None:
        return None
    if not contents:
        return {"size": len(data), "format": None, "shown": None, "truncated": False}
    if render == HEX:
        return _hex(data)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return _hex(data)
    if render == JSON and len(data) <= JSON_PARSE_LIMIT:
        pretty = _pretty(text)
        if pretty is not None:
            return _cut(len(data), JSON, pretty)
    return _cut(len(data), TEXT, text)


def headers_rendered(headers: list[tuple[str, bytes | None]] | None, render: Render, contents: bool) -> list[Rendered]:
    """Each header's name (always shown) and its value rendered as a key or value is."""
    return [{"name": name, "value": rendered(value, render, contents)} for name, value in headers or []]


def _pretty(text: str) -> str | None:
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return None


def _hex(data: bytes) -> Rendered:
    # Two characters a byte, space-separated: only the bytes that fit in SHOWN_LIMIT are converted.
    shown = data[: (SHOWN_LIMIT + 1) // 3].hex(" ")
    return {"size": len(data), "format": HEX, "shown": shown, "truncated": len(shown) < len(data) * 3 - 1}


def _cut(size: int, fmt: str, text: str) -> Rendered:
    return {"size": size, "format": fmt, "shown": text[:SHOWN_LIMIT], "truncated": len(text) > SHOWN_LIMIT}
