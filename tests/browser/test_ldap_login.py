"""LDAP login in the browser against a real slapd, with local login off: the login page's password form checks
the password with the directory, the user's LDAP group sets the role shown in the top bar, a local account's
password is refused, and a user in no mapped group gets no session."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page, expect
from pytest_django.live_server_helper import LiveServer

from controlplane.core.permissions import OPERATOR, role_of
from tests.browser.conftest import PASSWORD, make_user, shoot
from tests.support import slapd

pytestmark = pytest.mark.django_db(transaction=True)

LDAP_PORT_OFFSET = 62  # within this worker's stride, clear of the test clusters' ports and the OIDC provider's
PASSWORDS = {"gina": "gina-ldap-pass-1", "hank": "hank-ldap-pass-2"}


@pytest.fixture(scope="module")
def directory() -> Iterator[slapd.Slapd]:
    with slapd.running(LDAP_PORT_OFFSET, PASSWORDS, {"kafka-ops": ["gina"], "staff": ["hank"]}) as server:
        yield server


@pytest.fixture
def ldap_only(directory: slapd.Slapd, settings: Any) -> slapd.Slapd:
    slapd.log_in_through(settings, directory)
    settings.MIRRORPLANE_LOCAL_LOGIN = False
    settings.AUTHENTICATION_BACKENDS = [
        b for b in settings.AUTHENTICATION_BACKENDS if b != "django.contrib.auth.backends.ModelBackend"
    ]
    return directory


def submit(page: Page, base_url: str, username: str, password: str) -> None:
    page.goto(f"{base_url}/login/")
    expect(page.get_by_label("LDAP user name")).to_be_visible()  # local login off: the form asks for the directory's
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.get_by_role("button", name="Log in").click()


def test_an_ldap_user_logs_in_on_the_login_page_with_the_role_of_their_group(
    page: Page, live_server: LiveServer, ldap_only: slapd.Slapd
) -> None:
    make_user("local-admin", "admin")
    submit(page, live_server.url, "local-admin", PASSWORD)
    expect(page.locator(".alert.error")).to_contain_text("correct username and password")
    assert page.request.get(f"{live_server.url}/api/v1/clusters/").status == 403

    submit(page, live_server.url, "gina", "not-ginas-password")
    expect(page.locator(".alert.error")).to_contain_text("correct username and password")
    assert not User.objects.filter(username="gina").exists() or role_of(User.objects.get(username="gina")) is None

    submit(page, live_server.url, "gina", PASSWORDS["gina"])
    page.wait_for_url(f"{live_server.url}/", wait_until="commit", timeout=60_000)
    expect(page.locator(".who .role")).to_have_text(OPERATOR)
    shoot(page, "ldap-signed-in")
    assert page.request.get(f"{live_server.url}/api/v1/clusters/").status == 200
    gina = User.objects.get(username="gina")
    assert (role_of(gina), gina.has_usable_password()) == (OPERATOR, False)


def test_an_ldap_user_in_no_mapped_group_gets_no_session(
    page: Page, live_server: LiveServer, ldap_only: slapd.Slapd
) -> None:
    submit(page, live_server.url, "hank", PASSWORDS["hank"])
    expect(page.locator(".alert.error")).to_contain_text("correct username and password")
    assert page.url.startswith(f"{live_server.url}/login/")
    assert page.request.get(f"{live_server.url}/api/v1/clusters/").status == 403
