"""Request guards that apply to every endpoint."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

from controlplane.core.jsondepth import MAX_JSON_DEPTH, TOO_DEEP, json_depth


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
    stream directly, so the bound is set here once for every endpoint. A JSON value inside a form or multipart
    field is parsed by its serializer field, which keeps the same depth bound (``core.fields.BoundedJSONField``)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if limit is not None and _content_length(request) > limit:
            return JsonResponse({"detail": f"The request body is larger than {limit} bytes."}, status=400)
        if _content_length(request) and (request.content_type or "").endswith("json"):
            text = request.body.decode(request.encoding or "utf-8", errors="replace")
            if json_depth(text) > MAX_JSON_DEPTH:
                return JsonResponse({"detail": f"The JSON body is {TOO_DEEP}."}, status=400)
        return self.get_response(request)


def _content_length(request: HttpRequest) -> int:
    try:
        return max(0, int(request.META.get("CONTENT_LENGTH") or 0))
    except ValueError:
        return 0
