"""A webhook URL is http(s), of RFC 3986's characters, with an RFC 1123 host name or an IP literal: anything else
is a 400 naming url and the reason, and nothing of the request is applied."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from rest_framework.test import APIClient

from controlplane.alerts.models import WebhookTarget
from controlplane.clusters import crypto

pytestmark = pytest.mark.django_db
Api = Callable[[str | None], APIClient]

BAD_URLS = {
    "https://<b/id=x>/hook": "'<' is not allowed in a URL",
    "https://hooks.example.com/<script>alert(1)</script>": "'<' is not allowed in a URL",
    'https://hooks.example.com/"onmouseover="x': "'\"' is not allowed in a URL",
    "https://hooks example.com/": "' ' is not allowed in a URL",
    "https://hooks_1.example.com/": "the URL's host: 'hooks_1.example.com' is not a host name",
    "https://999.1.1.1/": "the URL's host: '999.1.1.1' is not an IPv4 address",
    "https://[::1/": "the URL's host is not a host name or an IP address",
    "https://[zz]/": "the URL's host is not a host name or an IP address",
}


@pytest.mark.parametrize(("url", "reason"), BAD_URLS.items())
def test_a_url_with_markup_or_a_bad_host_is_a_400_with_the_reason_and_nothing_is_stored(
    api: Api, url: str, reason: str
) -> None:
    response = api("admin").post("/api/v1/alert-webhooks/", {"name": "ops", "url": url}, format="json")

    assert response.status_code == 400
    assert list(response.json()) == ["url"]
    assert response.json()["url"][0].startswith(reason)
    assert not WebhookTarget.objects.exists()


@pytest.mark.parametrize(
    ("url", "origin"),
    [
        ("https://hooks.example.com:8443/services/T0?x=1&y=%3Cb%3E", "https://hooks.example.com:8443"),
        ("http://10.0.0.7:8080/alert", "http://10.0.0.7:8080"),
        ("http://[::1]:9000/alert", "http://[::1]:9000"),
        ("https://user:token@hooks-1.example.com/x#frag", "https://hooks-1.example.com"),
    ],
)
def test_names_and_ip_literals_are_stored(api: Api, url: str, origin: str) -> None:
    response = api("admin").post("/api/v1/alert-webhooks/", {"name": "ops", "url": url}, format="json")

    assert response.status_code == 201, response.content
    stored = WebhookTarget.objects.get()
    assert (stored.url_origin, crypto.decrypt(stored.url_encrypted)) == (origin, url)


def test_an_edit_with_a_bad_url_applies_nothing(api: Api) -> None:
    admin = api("admin")
    created = admin.post("/api/v1/alert-webhooks/", {"name": "ops", "url": "https://hooks.example.com/"}, format="json")
    before = WebhookTarget.objects.values().get()

    response = admin.patch(
        f"/api/v1/alert-webhooks/{created.json()['id']}/", {"name": "new", "url": "https://<b>/"}, format="json"
    )

    assert response.status_code == 400 and list(response.json()) == ["url"]
    assert WebhookTarget.objects.values().get() == before
