"""Token authentication of the API: knox's, answering a refused token with 401 and nothing else with a challenge."""

from __future__ import annotations

from typing import Any

from knox.auth import TokenAuthentication as KnoxTokenAuthentication
from rest_framework.authentication import get_authorization_header
from rest_framework.request import Request


class TokenAuthentication(KnoxTokenAuthentication):  # type: ignore[misc]  # knox ships no annotations
    """``Authorization: Token <secret>``; an unknown, expired or revoked token is a 401 with ``WWW-Authenticate``.

    DRF takes the challenge from the first authentication class, and a request with a challenge is refused with
    401, one without with 403. This class is first; it challenges only a request that sent an Authorization
    header, so a refused token gets its 401 while the pages' session requests (and anonymous ones) keep their 403.
    """

    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        if not get_authorization_header(request):
            return None
        result: tuple[Any, Any] | None = super().authenticate(request)
        return result

    def authenticate_header(self, request: Request) -> str | None:
        if not get_authorization_header(request):
            return None
        header: str = super().authenticate_header(request)
        return header
