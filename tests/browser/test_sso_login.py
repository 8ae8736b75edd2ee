"""Single sign-on through a real OpenID Connect provider (django-oidc-provider in its own process): the browser
goes to the provider's login form, the provider sends it back with an authorization code, and Mirrorplane checks
the provider's signed ID token (keys from its JWKS, endpoints from its discovery document) and sets the user's role
from their groups."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from controlplane.audit.models import AuditRecord
from controlplane.core.permissions import ADMIN, OPERATOR, role_of
from tests.browser.conftest import shoot
from tests.support.oidc_provider.server import OidcProvider
from tests.support.workers import port

pytestmark = pytest.mark.django_db(transaction=True)

PROVIDER_PORT_OFFSET = 61  # within this worker's stride, clear of the test clusters' ports
CLIENT_ID = "mirrorplane-tests"
CLIENT_SECRET = "oidc-client-secret-for-tests"
PASSWORDS = {"alice": "alice-provider-pass-1", "frank": "frank-provider-pass-2"}


@pytest.fixture(scope="module")
def provider(live_server: LiveServer) -> Iterator[OidcProvider]:
    base = int(os.environ.get("MIRRORPLANE_TEST_PORT_BASE", "29092"))
    with tempfile.TemporaryDirectory(prefix="mirrorplane-oidc-") as state:
        server = OidcProvider(Path(state), port(base) + PROVIDER_PORT_OFFSET)
        server.start(PASSWORDS, CLIENT_ID, CLIENT_SECRET, f"{live_server.url}/oidc/callback/")
        try:
            yield server
        finally:
            server.stop()


@pytest.fixture
def sso(provider: OidcProvider, settings: Any) -> OidcProvider:
    """Settings as docs/sso.md's example gives them, pointed at the test provider; local login off."""
    settings.MIRRORPLANE_OIDC = True
    settings.MIRRORPLANE_OIDC_ISSUER = provider.issuer
    settings.OIDC_RP_CLIENT_ID = CLIENT_ID
    settings.OIDC_RP_CLIENT_SECRET = CLIENT_SECRET
    settings.OIDC_RP_SCOPES = "openid email profile groups"
    settings.MIRRORPLANE_OIDC_ROLE_GROUPS = {"kafka-admins": ADMIN, "kafka-ops": OPERATOR}
    settings.MIRRORPLANE_LOCAL_LOGIN = False
    settings.AUTHENTICATION_BACKENDS = [
        "axes.backends.AxesStandaloneBackend",
        "controlplane.accounts.backends.OidcBackend",
    ]
    provider.set_groups({"alice": ["kafka-admins", "everyone"], "frank": ["everyone"]})
    return provider


def sign_in(page: Page, base_url: str, username: str) -> None:
    """From Mirrorplane's login page through the provider's form."""
    page.goto(f"{base_url}/login/")
    expect(page.locator("input[name=password]")).to_have_count(0)  # local login is off: no password form here
    shoot(page, "sso-login-page")
    page.get_by_role("link", name="Log in with single sign-on").click()
    page.get_by_label("Provider user").fill(username)
    page.get_by_label("Provider password").fill(PASSWORDS[username])
    page.get_by_role("button", name="Sign in to the provider").click()


def test_single_sign_on_gives_a_session_with_the_role_of_the_users_group(
    page: Page, live_server: LiveServer, sso: OidcProvider
) -> None:
    sign_in(page, live_server.url, "alice")
    page.wait_for_url(f"{live_server.url}/", timeout=60_000)
    expect(page.locator(".who .role")).to_have_text(ADMIN)
    shoot(page, "sso-signed-in")
    assert page.request.get(f"{live_server.url}/api/v1/clusters/").status == 200
    alice = User.objects.get(username="alice")
    assert (role_of(alice), alice.email, alice.has_usable_password()) == (ADMIN, "alice@example.org", False)

    # Moved to another group at the provider: the role follows at the next login.
    sso.set_groups({"alice": ["kafka-ops"]})
    page.context.clear_cookies()
    sign_in(page, live_server.url, "alice")
    page.wait_for_url(f"{live_server.url}/", timeout=60_000)
    expect(page.locator(".who .role")).to_have_text(OPERATOR)
    assert role_of(User.objects.get(username="alice")) == OPERATOR
    changes = AuditRecord.objects.filter(action="auth.roles").order_by("id")
    assert [(r.before, r.after) for r in changes] == [
        ({"roles": []}, {"roles": [ADMIN], "by": "oidc"}),
        ({"roles": [ADMIN]}, {"roles": [OPERATOR], "by": "oidc"}),
    ]


def test_a_user_in_no_mapped_group_is_refused(page: Page, live_server: LiveServer, sso: OidcProvider) -> None:
    sign_in(page, live_server.url, "frank")
    page.wait_for_url(f"{live_server.url}/login/**", timeout=60_000)
    assert page.request.get(f"{live_server.url}/api/v1/clusters/").status == 403
    assert role_of(User.objects.get(username="frank")) is None


def test_the_login_page_hides_the_single_sign_on_button_when_it_is_off(page: Page, live_server: LiveServer) -> None:
    page.goto(f"{live_server.url}/login/")
    expect(page.get_by_role("link", name="Log in with single sign-on")).to_have_count(0)
    expect(page.locator("input[name=password]")).to_have_count(1)
    assert page.request.get(f"{live_server.url}/oidc/authenticate/").status == 404
