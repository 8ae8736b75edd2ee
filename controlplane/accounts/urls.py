"""Single sign-on's two pages: the redirect to the OpenID Connect provider and its callback (404s when it is off)."""

from __future__ import annotations

from django.urls import path

from controlplane.accounts.oidc import AuthenticationCallbackView, AuthenticationRequestView

urlpatterns = [
    path("oidc/authenticate/", AuthenticationRequestView.as_view(), name="oidc_authentication_init"),
    path("oidc/callback/", AuthenticationCallbackView.as_view(), name="oidc_authentication_callback"),
]
