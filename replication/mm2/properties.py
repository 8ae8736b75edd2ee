"""Java .properties text, as MirrorMaker 2 reads it: parsed to a dict, and written back line by line."""

from __future__ import annotations

import re
from collections.abc import Iterator

import javaproperties


class ConfigError(ValueError):
    """A flow property that is unknown or malformed; the message starts with the property's MM2 name."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"{name}: {reason}")
        self.property_name = name
        self.reason = reason


_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_WHITESPACE = " \t\f"


def parse_properties(text: str, errors: list[ConfigError] | None = None) -> dict[str, str]:
    """Java .properties semantics (separators `=`, `:` or whitespace, `#`/`!` comments, `\\` escapes and line
    continuation), with values also trimmed on the right. Duplicate keys: the last one wins.

    A malformed line raises ConfigError naming it; with ``errors``, it is appended there instead and the other
    lines are read (after a malformed ``\\u`` escape none can be: the reader stops there)."""
    return {key: value for _, key, value in _entries(text, errors)}


def property_lines(text: str, errors: list[ConfigError] | None = None) -> dict[str, int]:
    """The line number of each property (of its last occurrence, the one that wins), to point errors at;
    ``errors`` as parse_properties'."""
    return {key: number for number, key, _ in _entries(text, errors)}


def _entries(text: str, errors: list[ConfigError] | None = None) -> Iterator[tuple[int, str, str]]:
    """(line number, key, value) of each property; javaproperties reads them, and each element's source text
    (comments and blank lines included) counts the lines."""
    number = 1
    elements = javaproperties.parse(text)
    while True:
        try:
            element = next(elements, None)
        except javaproperties.InvalidUEscapeError as exc:
            if errors is None:
                raise ConfigError(f"line {number}", "malformed \\uxxxx escape") from exc
            errors.append(ConfigError(f"line {number}", "malformed \\uxxxx escape; the lines after it are not read"))
            return
        if element is None:
            return
        if isinstance(element, javaproperties.KeyValue) and element.key:
            yield number, element.key, _trimmed(element)
        elif not isinstance(element, javaproperties.Comment) and element.source.strip(_WHITESPACE + "\r\n"):
            # `= value`, or a lone continuation backslash that Java would skip: a line with no name is a mistake
            error = ConfigError(f"line {number}", "no property name before the value")
            if errors is None:
                raise error
            errors.append(error)
        number += len(_LINE_BREAK.findall(element.source))


def _trimmed(element: javaproperties.KeyValue) -> str:
    """The value without the unescaped whitespace that ends its logical line (Java would keep it; a stray trailing
    space in a copied MM2 file is never meant). An escaped one, `a\\ `, stays."""
    physical = _LINE_BREAK.split(element.source.rstrip("\r\n"))
    logical = "".join(_uncontinued(line if i == 0 else line.lstrip(_WHITESPACE)) for i, line in enumerate(physical))
    kept = logical.rstrip(_WHITESPACE)
    trailing = max(0, len(logical) - len(kept) - _odd_backslashes(kept))  # `\\ `: the first space is escaped
    value = str(element.value)
    return value[: len(value) - min(trailing, len(value))]


def _uncontinued(line: str) -> str:
    return line[:-1] if _odd_backslashes(line) else line


def _odd_backslashes(text: str) -> int:
    """1 if text ends with an odd number of backslashes (the last one escapes what follows), else 0."""
    return (len(text) - len(text.rstrip("\\"))) % 2


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
