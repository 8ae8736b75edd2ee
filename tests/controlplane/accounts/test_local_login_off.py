"""MIRRORPLANE_LOCAL_LOGIN=false: a local account's password is refused on every login form and a local account gets
no new API token; the tokens it already holds keep working until they expire or are revoked."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from controlplane.accounts import services
from controlplane.accounts.models import ApiToken
from controlplane.core.permissions import ADMIN
from tests.controlplane.api.base import client_for, make_user

PASSWORD = "correct-horse-battery"


@pytest.fixture
def local_login_off(settings: Any) -> None:
    """What settings.py makes of MIRRORPLANE_LOCAL_LOGIN=false."""
    settings.MIRRORPLANE_LOCAL_LOGIN = False
    settings.AUTHENTICATION_BACKENDS = [
        b for b in settings.AUTHENTICATION_BACKENDS if b != "django.contrib.auth.backends.ModelBackend"
    ]


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/login/", "/admin/login/"])
def test_a_local_password_is_refused_when_local_login_is_off(local_login_off: None, url: str) -> None:
    User.objects.create_superuser("ada", password=PASSWORD)
    client = Client()
    response = client.post(url, {"username": "ada", "password": PASSWORD, "next": "/"})
    assert response.status_code == 200
    assert "_auth_user_id" not in client.session
    assert client.get("/api/v1/clusters/").status_code == 403


@pytest.mark.django_db
def test_a_local_password_logs_in_by_default() -> None:
    User.objects.create_superuser("ada", password=PASSWORD)
    client = Client()
    assert client.post("/login/", {"username": "ada", "password": PASSWORD, "next": "/"}).status_code == 302
    assert client.get("/api/v1/clusters/").status_code == 200


@pytest.mark.django_db
def test_the_login_page_offers_no_password_form_when_local_login_is_off(local_login_off: None) -> None:
    page = Client().get("/login/").content.decode()
    assert 'name="password"' not in page
    assert "MIRRORPLANE_LOCAL_LOGIN=false" in page


@pytest.mark.django_db
def test_the_login_page_offers_the_password_form_by_default() -> None:
    page = Client().get("/login/").content.decode()
    assert 'name="password"' in page
    assert "single sign-on" not in page


@pytest.mark.django_db
def test_a_local_account_gets_no_new_api_token_but_keeps_the_ones_it_has(local_login_off: None) -> None:
    ada = make_user("ada", ADMIN)
    client = client_for(ada)  # a token issued before local login was turned off
    response = client.post("/api/v1/tokens/", {"name": "ci"}, format="json")
    assert response.status_code == 403
    assert "MIRRORPLANE_LOCAL_LOGIN=false" in response.json()["detail"]
    assert ApiToken.objects.filter(user=ada).count() == 1
    assert client.get("/api/v1/clusters/").status_code == 200


@pytest.mark.django_db
def test_a_directory_account_still_gets_api_tokens_when_local_login_is_off(
    local_login_off: None, settings: Any
) -> None:
    settings.AUTHENTICATION_BACKENDS = [*settings.AUTHENTICATION_BACKENDS, "controlplane.accounts.backends.LdapBackend"]
    bob = make_user("bob", ADMIN)
    bob.set_unusable_password()
    bob.save()
    client = Client()
    client.force_login(bob, backend="controlplane.accounts.backends.LdapBackend")
    response = client.post("/api/v1/tokens/", {"name": "ci"}, content_type="application/json")
    assert response.status_code == 201, response.content
    assert services.refusal_to_issue(bob) is None
