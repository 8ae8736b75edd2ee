"""OpenID Connect with mozilla-django-oidc: the provider's endpoints come from its discovery document.

mozilla-django-oidc reads each endpoint from a setting. Here a setting left unset is taken from
``<MIRRORPLANE_OIDC_ISSUER>/.well-known/openid-configuration``, fetched when first used and kept for the life of the
process. The value is lazy: building a backend (which Django does on every request of a signed-in user) fetches
nothing, so a provider that is down stops new single sign-on logins only.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import requests
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.http import Http404, HttpRequest, HttpResponseBase
from django.utils.functional import lazy
from mozilla_django_oidc.utils import import_from_settings
from mozilla_django_oidc.views import (
    OIDCAuthenticationCallbackView,
    OIDCAuthenticationRequestView,
)

DISCOVERED = {
    "OIDC_OP_AUTHORIZATION_ENDPOINT": "authorization_endpoint",
    "OIDC_OP_TOKEN_ENDPOINT": "token_endpoint",
    "OIDC_OP_USER_ENDPOINT": "userinfo_endpoint",
    "OIDC_OP_JWKS_ENDPOINT": "jwks_uri",
}


@cache
def discovery(issuer: str) -> dict[str, Any]:
    """The provider's discovery document; it must name ``issuer`` as its issuer (OpenID Connect Discovery 4.3)."""
    url = f"{issuer.rstrip('/')}/.well-known/openid-configuration"
    response = requests.get(url, timeout=settings.OIDC_TIMEOUT, verify=settings.OIDC_VERIFY_SSL)
    response.raise_for_status()
    document: dict[str, Any] = response.json()
    if document.get("issuer") != issuer:
        raise ImproperlyConfigured(
            f"MIRRORPLANE_OIDC_ISSUER: {url} names the issuer {document.get('issuer')!r}, not {issuer!r}"
        )
    return document


def _discovered(key: str) -> str:
    return str(discovery(settings.MIRRORPLANE_OIDC_ISSUER)[key])


_lazy_discovered = lazy(_discovered, str)


def oidc_setting(attr: str, *args: Any) -> Any:
    """mozilla-django-oidc's setting ``attr``; an endpoint not set explicitly comes from discovery."""
    if attr in DISCOVERED and not hasattr(settings, attr):
        return _lazy_discovered(DISCOVERED[attr])
    return import_from_settings(attr, *args)


class _Enabled:
    """A view that is a 404 unless MIRRORPLANE_OIDC_ISSUER is set."""

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not settings.MIRRORPLANE_OIDC:
            raise Http404("single sign-on is not configured")
        response: HttpResponseBase = super().dispatch(request, *args, **kwargs)  # type: ignore[misc]  # an unannotated base
        return response


class AuthenticationRequestView(_Enabled, OIDCAuthenticationRequestView):  # type: ignore[misc]  # base is Any
    """Redirects the browser to the provider's login."""

    get_settings = staticmethod(oidc_setting)


class AuthenticationCallbackView(_Enabled, OIDCAuthenticationCallbackView):  # type: ignore[misc]  # base is Any
    """Takes the provider's answer: exchanges the code, checks the ID token, logs the user in."""

    get_settings = staticmethod(oidc_setting)
