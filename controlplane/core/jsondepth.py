"""The one bound on JSON nesting, for every place a request's JSON is parsed (a body, or a form field's value)."""

from __future__ import annotations

import itertools
import re

# Deeper JSON than any request of the API needs (its deepest is about 4 levels). Python's json module recurses
# once per level, so "[" * 1000 would otherwise end in a RecursionError (a 500) in the parser.
MAX_JSON_DEPTH = 64
TOO_DEEP = f"nested deeper than {MAX_JSON_DEPTH} levels"
# A string, or an unterminated one up to the end: the optional closing quote keeps the scan linear.
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def json_depth(text: str) -> int:
    """The deepest nesting of arrays and objects in ``text``; brackets inside strings do not count. Linear time
    (an unterminated string runs to the end), and not a validator: the parser still refuses malformed JSON."""
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    return max(itertools.accumulate(map(_STEP.__getitem__, brackets)), default=0)
