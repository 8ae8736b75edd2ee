"""Request guards that apply to every endpoint."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse


class RejectNulBytes:
    """A NUL byte in a query parameter is a 400 naming the parameter, not a database error (Postgres refuses NUL)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        for name, values in request.GET.lists():
            if "\x00" in name or any("\x00" in value for value in values):
                return JsonResponse({name.replace("\x00", ""): ["NUL bytes are not allowed."]}, status=400)
        return self.get_response(request)
