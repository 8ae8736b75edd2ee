"""A change of a user's password, by any path, deletes that user's API tokens (and nobody else's)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from rest_framework.test import APIClient

from controlplane.accounts.models import ApiToken
from controlplane.audit.models import AuditRecord
from tests.controlplane.api.base import make_user

NEW_PASSWORD = "a-new-long-passphrase-7"


def works(secret: str) -> int:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {secret}")
    return client.get("/api/v1/clusters/").status_code


def log_in(username: str, password: str) -> int:
    return Client().post("/login/", {"username": username, "password": password}).status_code


def by_set_password(user: User, admin: User) -> None:
    user.set_password(NEW_PASSWORD)
    user.save()


def by_the_changepassword_command(user: User, admin: User, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("getpass.getpass", lambda prompt="": NEW_PASSWORD)
    call_command("changepassword", user.username)


def by_the_admin_form(user: User, admin: User) -> None:
    client = Client()
    client.force_login(admin)
    form = {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD, "usable_password": "true"}
    response = client.post(f"/admin/auth/user/{user.pk}/password/", form)
    assert response.status_code == 302, response.content.decode()[:2000]


def by_writing_the_hash(user: User, admin: User) -> None:
    user.password = make_password(NEW_PASSWORD)
    user.save()


@pytest.mark.django_db
@pytest.mark.parametrize(
    "change",
    ["set_password", "changepassword", "admin", "hash"],
)
def test_a_password_change_revokes_the_users_tokens_only(change: str, monkeypatch: pytest.MonkeyPatch) -> None:
    alice, bob = make_user("alice", "viewer"), make_user("bob", "viewer")
    admin = User.objects.create_superuser("root", password="unused-root")
    secrets = [ApiToken.objects.create(user=alice)[1] for _ in range(2)]
    _, bob_secret = ApiToken.objects.create(user=bob)
    assert [works(secret) for secret in secrets] == [200, 200]
    paths: dict[str, Callable[[], None]] = {
        "set_password": lambda: by_set_password(alice, admin),
        "changepassword": lambda: by_the_changepassword_command(alice, admin, monkeypatch),
        "admin": lambda: by_the_admin_form(alice, admin),
        "hash": lambda: by_writing_the_hash(alice, admin),
    }

    paths[change]()

    alice.refresh_from_db()
    assert alice.check_password(NEW_PASSWORD)
    assert [works(secret) for secret in secrets] == [401, 401]
    assert not ApiToken.objects.filter(user=alice).exists()
    assert works(bob_secret) == 200
    revoked = AuditRecord.objects.filter(action="token.revoke")
    assert [record.after for record in revoked] == [{"reason": "password changed"}] * 2


@pytest.mark.django_db
def test_saving_a_user_without_a_new_password_keeps_the_tokens() -> None:
    alice = make_user("alice", "viewer")
    _, secret = ApiToken.objects.create(user=alice)
    alice.first_name = "Alice"
    alice.save()
    assert log_in("alice", "unused-alice") == 302  # saves last_login only
    assert works(secret) == 200
    assert not AuditRecord.objects.filter(action="token.revoke").exists()


@pytest.mark.django_db
def test_djangos_hash_upgrade_at_login_is_not_a_password_change(settings: Any) -> None:
    settings.PASSWORD_HASHERS = [
        "django.contrib.auth.hashers.PBKDF2PasswordHasher",
        "django.contrib.auth.hashers.MD5PasswordHasher",
    ]
    alice = make_user("alice", "viewer")
    User.objects.filter(pk=alice.pk).update(password=make_password("old-but-fine", hasher="md5"))
    _, secret = ApiToken.objects.create(user=alice)

    assert log_in("alice", "old-but-fine") == 302

    alice.refresh_from_db()
    assert alice.password.startswith("pbkdf2_sha256$")  # upgraded
    assert works(secret) == 200
