from __future__ import annotations

from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import BaseParser

MAX_BODY_BYTES = 1024 * 1024


class PlainTextParser(BaseParser):
    """A text/plain body (an MM2 properties file) as a str."""

    media_type = "text/plain"

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> str:  # type: ignore[override]  # request.data is the text itself
        raw = stream.read(MAX_BODY_BYTES + 1) if stream is not None else b""
        if len(raw) > MAX_BODY_BYTES:
            raise ParseError(f"the file is larger than {MAX_BODY_BYTES} bytes")
        try:
            return str(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise ParseError(f"the file is not UTF-8: {exc}") from None
