"""Java .properties text, as MirrorMaker 2 reads it: parsed to a dict, and written back line by line."""

from __future__ import annotations

import re
from collections.abc import Iterator

from replication.config import ConfigError

_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|.?)", re.DOTALL)
_UNESCAPED = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_WHITESPACE = " \t\f"


def parse_properties(text: str) -> dict[str, str]:
    """Java .properties semantics (separators `=`, `:` or whitespace, `#`/`!` comments, `\\` escapes and line
    continuation), with values also trimmed on the right. Duplicate keys: the last one wins."""
    return {key: value for _, key, value in _entries(text)}


def property_lines(text: str) -> dict[str, int]:
    """The line number of each property (of its last occurrence, the one that wins), to point errors at."""
    return {key: number for number, key, _ in _entries(text)}


def _entries(text: str) -> Iterator[tuple[int, str, str]]:
    for number, line in _logical_lines(text):
        key, value = _split_line(line)
        if not key:
            raise ConfigError(f"line {number}", "no property name before the value")
        yield number, _unescape(key, number), _unescape(value, number)


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    start, parts = 0, list[str]()
    for number, raw in enumerate(re.split(r"\r\n|\r|\n", text), start=1):
        line = raw.lstrip(_WHITESPACE)
        if not parts and (not line or line[0] in "#!"):
            continue
        start = start if parts else number
        continued = (len(line) - len(line.rstrip("\\"))) % 2 == 1
        parts.append(line[:-1] if continued else line)
        if not continued:
            yield start, "".join(parts)
            parts = []
    if parts:
        yield start, "".join(parts)


def _split_line(line: str) -> tuple[str, str]:
    end = 0
    while end < len(line) and line[end] not in "=:" + _WHITESPACE:
        end += 2 if line[end] == "\\" else 1
    end = min(end, len(line))
    rest = line[end:].lstrip(_WHITESPACE)
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(_WHITESPACE)
    value = rest.rstrip(_WHITESPACE)
    if (len(value) - len(value.rstrip("\\"))) % 2 == 1:  # keep an escaped trailing space: `a\ `
        value = rest[: len(value) + 1]
    return line[:end], value


def _unescape(text: str, number: int) -> str:
    def replace(match: re.Match[str]) -> str:
        code = match.group(1)
        if code.startswith("u") and len(code) == 5:
            return chr(int(code[1:], 16))
        if code == "u":
            raise ConfigError(f"line {number}", "malformed \\uxxxx escape")
        return _UNESCAPED.get(code, code)

    return _ESCAPE.sub(replace, text)


def _escape(text: str, *, key: bool) -> str:
    out = "".join(_escape_char(c, key) for c in text)
    if not key:  # leading/trailing spaces would be trimmed away when the file is read back
        stripped = out.strip(" ")
        lead, trail = len(out) - len(out.lstrip(" ")), len(out) - len(out.rstrip(" "))
        out = "\\u0020" * lead + stripped + "\\u0020" * trail if stripped else "\\u0020" * len(out)
    return out


def _escape_char(char: str, key: bool) -> str:
    named = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r", "\f": "\\f"}
    if char in named:
        return named[char]
    if key and char in "=: #!":
        return "\\" + char
    return char if char.isprintable() or ord(char) > 0xFFFF else f"\\u{ord(char):04x}"


def property_line(key: str, value: str) -> str:
    """One `key = value` line that parse_properties reads back as exactly that key and value."""
    return f"{_escape(key, key=True)} = {_escape(value, key=False)}"
