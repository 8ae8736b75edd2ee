"""A webhook URL is http(s), of RFC 3986's characters, with an RFC 1123 host name or an IP literal that resolves
to public addresses only (unless an admin allow-lists the host): anything else is a 400 naming url and the reason,
and nothing of the request is applied."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.test import override_settings
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


INTERNAL_URLS = {
    "http://127.0.0.1:5432/": "'127.0.0.1' resolves to 127.0.0.1, a loopback address",
    "http://localhost/": "'localhost' resolves to 127.0.0.1, a loopback address",
    "http://0x7f000001/": "'0x7f000001' resolves to 127.0.0.1, a loopback address",
    "http://[::1]:9000/alert": "'::1' resolves to ::1, a loopback address",
    "http://[::ffff:127.0.0.1]/": "'::ffff:127.0.0.1' resolves to ::ffff:127.0.0.1, an IPv6 address embedding "
    "127.0.0.1, a loopback address",
    "http://[::127.0.0.1]/": "'::127.0.0.1' resolves to ::127.0.0.1, an IPv6 address embedding 127.0.0.1, a loopback",
    "http://[2002:7f00:1::]/": "'2002:7f00:1::' resolves to 2002:7f00:1::, an IPv6 address embedding 127.0.0.1",
    "http://169.254.169.254/latest/meta-data/": "'169.254.169.254' resolves to 169.254.169.254, a link-local address",
    "http://metadata.example.com/": "'metadata.example.com' resolves to 169.254.169.254, a link-local address",
    "http://10.0.0.7:8080/alert": "'10.0.0.7' resolves to 10.0.0.7, a private address",
    "https://mixed.example.com/": "'mixed.example.com' resolves to 10.0.0.7, a private address",
    "https://mapped.example.com/": "'mapped.example.com' resolves to ::ffff:127.0.0.1, an IPv6 address embedding",
    "http://[fd00::1]/": "'fd00::1' resolves to fd00::1, a private address",
    "http://224.0.0.1/": "'224.0.0.1' resolves to 224.0.0.1, a multicast address",
    "http://0.0.0.0/": "'0.0.0.0' resolves to 0.0.0.0, an unspecified address",
    "http://240.0.0.1/": "'240.0.0.1' resolves to 240.0.0.1, a reserved address",
    "http://100.64.0.1/": "'100.64.0.1' resolves to 100.64.0.1, a non-global address",
    "https://nowhere.example.com/": "'nowhere.example.com' does not resolve",
}


def _refused_urls() -> dict[str, str]:
    """Every refused URL with the start of its 400: a malformed one, or one whose host resolves to an internal
    address (INTERNAL_URLS, under the field's own prefix)."""
    return BAD_URLS | {url: f"the URL's host: {reason}" for url, reason in INTERNAL_URLS.items()}


@pytest.mark.parametrize(("url", "reason"), _refused_urls().items())
def test_a_malformed_or_internal_url_is_a_400_with_the_reason_and_nothing_is_stored(
    api: Api, url: str, reason: str
) -> None:
    response = api("admin").post("/api/v1/alert-webhooks/", {"name": "ops", "url": url}, format="json")

    assert response.status_code == 400
    assert list(response.json()) == ["url"]
    assert response.json()["url"][0].startswith(reason), response.json()
    assert not WebhookTarget.objects.exists()


@pytest.mark.parametrize(
    ("url", "origin"),
    [
        ("https://hooks.example.com:8443/services/T0?x=1&y=%3Cb%3E", "https://hooks.example.com:8443"),
        ("http://93.184.215.14:8080/alert", "http://93.184.215.14:8080"),
        (
            "http://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]:9000/alert",
            "http://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]:9000",
        ),
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


@override_settings(MIRRORPLANE_WEBHOOK_ALLOWED_HOSTS=["10.0.0.7", "Metadata.Example.com", "::1"])
@pytest.mark.parametrize(
    "url", ["http://10.0.0.7:8080/alert", "http://metadata.example.com/", "http://[::1]:9000/alert"]
)
def test_an_allow_listed_host_may_resolve_to_an_internal_address(api: Api, url: str) -> None:
    response = api("admin").post("/api/v1/alert-webhooks/", {"name": "ops", "url": url}, format="json")

    assert response.status_code == 201, response.content
    assert crypto.decrypt(WebhookTarget.objects.get().url_encrypted) == url


def test_an_edit_to_an_internal_url_applies_nothing(api: Api) -> None:
    admin = api("admin")
    created = admin.post("/api/v1/alert-webhooks/", {"name": "ops", "url": "https://hooks.example.com/"}, format="json")
    before = WebhookTarget.objects.values().get()

    response = admin.patch(
        f"/api/v1/alert-webhooks/{created.json()['id']}/", {"url": "http://169.254.169.254/"}, format="json"
    )

    assert response.status_code == 400 and "link-local" in response.json()["url"][0]
    assert WebhookTarget.objects.values().get() == before
