"""Request guards that apply to every endpoint."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

# Deeper JSON than any request body of the API needs (its deepest is about 4 levels). Python's json module
# recurses once per level, so "[" * 1000 would otherwise end in a RecursionError (a 500) in the parser.
MAX_JSON_DEPTH = 64
# A string, or an unterminated one up to the end: the optional closing quote keeps the scan linear.
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


class RejectNulBytes:
    """A NUL byte in a query parameter is a 400 naming the parameter, not a database error (Postgres refuses NUL)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        for name, values in request.GET.lists():
            if "\x00" in name or any("\x00" in value for value in values):
                return JsonResponse({name.replace("\x00", ""): ["NUL bytes are not allowed."]}, status=400)
        return self.get_response(request)


class BoundRequestBody:
    """A body larger than DATA_UPLOAD_MAX_MEMORY_SIZE, or JSON nested deeper than MAX_JSON_DEPTH, is a 400
    before any view or parser reads it. Django bounds only request.body and request.POST; DRF's parsers read the
    stream directly, so the bound is set here once for every endpoint."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if limit is not None and _content_length(request) > limit:
            return JsonResponse({"detail": f"The request body is larger than {limit} bytes."}, status=400)
        if _content_length(request) and (request.content_type or "").endswith("json"):
            text = request.body.decode(request.encoding or "utf-8", errors="replace")
            if json_depth(text) > MAX_JSON_DEPTH:
                detail = f"The JSON body is nested deeper than {MAX_JSON_DEPTH} levels."
                return JsonResponse({"detail": detail}, status=400)
        return self.get_response(request)


def json_depth(text: str) -> int:
    """The deepest nesting of arrays and objects in ``text``; brackets inside strings do not count. Linear time
    (an unterminated string runs to the end), and not a validator: the parser still refuses malformed JSON."""
    brackets = _NOT_BRACKET.sub("", _JSON_STRING.sub("", text))
    return max(itertools.accumulate(map(_STEP.__getitem__, brackets)), default=0)


def _content_length(request: HttpRequest) -> int:
    try:
        return max(0, int(request.META.get("CONTENT_LENGTH") or 0))
    except ValueError:
        return 0
