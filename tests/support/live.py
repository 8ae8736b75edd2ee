"""Real HTTP requests to pytest-django's live_server, as a user of a given role (token or session)."""

from __future__ import annotations

from typing import Any

import requests
from django.conf import settings
from django.test import Client

from controlplane.accounts.models import ApiToken
from tests.controlplane.api.base import make_user

TIMEOUT = 30


class Http:
    """A requests session against the live server; ``token=True`` sends an API token, otherwise a login session."""

    def __init__(self, base_url: str, role: str | None, name: str = "", token: bool = True) -> None:
        self.base_url = base_url
        self.session = requests.Session()
        self.user = make_user(name or f"live-{role or 'nobody'}", role)
        if token:
            self.session.headers["Authorization"] = f"Token {ApiToken.objects.create(user=self.user)[1]}"
        else:
            client = Client()
            client.force_login(self.user)
            self.session.cookies.set(settings.SESSION_COOKIE_NAME, client.cookies[settings.SESSION_COOKIE_NAME].value)

    def request(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        return self.session.request(method, self.base_url + path, timeout=TIMEOUT, allow_redirects=False, **kwargs)

    def get(self, path: str, **kwargs: Any) -> requests.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, json: Any = None, **kwargs: Any) -> requests.Response:
        return self.request("POST", path, json=json, **kwargs)

    def patch(self, path: str, json: Any = None, **kwargs: Any) -> requests.Response:
        return self.request("PATCH", path, json=json, **kwargs)
