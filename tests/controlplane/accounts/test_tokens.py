"""API tokens: hashed at rest, expiring, revocable by their user and by admins, gone when the password changes."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from controlplane.accounts.models import ApiToken
from controlplane.audit.models import AuditRecord
from tests.controlplane.api.base import make_user

URL = "/api/v1/tokens/"
PASSWORD = "correct-horse-battery"


def with_token(secret: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {secret}")
    return client


def logged_in(user: User) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


def works(secret: str) -> int:
    """The status of a read that any role may make, with this token."""
    return with_token(secret).get("/api/v1/clusters/").status_code


def every_stored_value() -> str:
    """Every cell of every table, as text: what someone holding a copy of the database would see."""
    cells: list[str] = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names():
            cursor.execute(f'SELECT * FROM "{table}"')  # table names from the schema itself
            cells.extend(str(cell) for row in cursor.fetchall() for cell in row)
    return "\n".join(cells)


@pytest.mark.django_db
def test_the_database_keeps_a_hash_of_the_token_never_the_token() -> None:
    alice = make_user("alice", "viewer")
    created = logged_in(alice).post(URL, {"name": "ci"}, format="json")
    assert created.status_code == 201, created.content
    secret = created.json()["token"]
    assert secret.startswith("mp_") and len(secret) == 67
    assert works(secret) == 200
    stored = every_stored_value()
    assert secret not in stored
    assert secret[3:] not in stored  # nor the random part alone
    assert ApiToken.objects.get().digest != secret


@pytest.mark.django_db
def test_the_list_shows_no_secret_and_the_secret_is_shown_only_when_created() -> None:
    alice = make_user("alice", "viewer")
    client = logged_in(alice)
    secret = client.post(URL, {"name": "ci", "expiry_hours": 2}, format="json").json()["token"]
    listed = client.get(URL)
    assert listed.status_code == 200
    [item] = listed.json()
    assert set(item) == {"id", "name", "prefix", "user", "created", "expiry"}
    assert (item["name"], item["user"], item["prefix"]) == ("ci", "alice", secret[:11])
    assert secret not in listed.content.decode()
    assert client.get(f"{URL}{item['id']}/").json() == item


@pytest.mark.django_db
def test_a_token_expires_after_the_hours_asked_for_and_is_then_refused_with_401() -> None:
    alice = make_user("alice", "viewer")
    secret = logged_in(alice).post(URL, {"expiry_hours": 3}, format="json").json()["token"]
    token = ApiToken.objects.get()
    assert token.expiry is not None
    assert abs(token.expiry - (timezone.now() + timedelta(hours=3))) < timedelta(minutes=1)
    assert works(secret) == 200

    ApiToken.objects.filter(pk=token.pk).update(expiry=timezone.now() - timedelta(seconds=1))

    response = with_token(secret).get("/api/v1/clusters/")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"


@pytest.mark.django_db
def test_without_an_expiry_asked_for_a_token_lives_the_configured_hours() -> None:
    alice = make_user("alice", "viewer")
    logged_in(alice).post(URL, {}, format="json")
    expiry = ApiToken.objects.get().expiry
    assert expiry is not None
    assert abs(expiry - (timezone.now() + timedelta(hours=720))) < timedelta(minutes=1)


@pytest.mark.django_db
def test_a_longer_life_than_the_configured_hours_is_refused_naming_the_field() -> None:
    alice = make_user("alice", "viewer")
    response = logged_in(alice).post(URL, {"expiry_hours": 721}, format="json")
    assert response.status_code == 400
    assert "expiry_hours" in response.json()
    assert not ApiToken.objects.exists()


@pytest.mark.django_db
def test_a_token_cannot_create_a_token_that_outlives_it() -> None:
    alice = make_user("alice", "viewer")
    first, first_secret = ApiToken.objects.create(user=alice, expiry=timedelta(hours=1))
    response = with_token(first_secret).post(URL, {"expiry_hours": 700}, format="json")
    assert response.status_code == 201
    second = ApiToken.objects.get(pk=response.json()["id"])
    assert second.expiry == first.expiry


@pytest.mark.django_db
def test_a_user_revokes_their_own_token_which_then_gets_401() -> None:
    alice = make_user("alice", "viewer")
    _, secret = ApiToken.objects.create(user=alice)
    token_id = ApiToken.objects.get().pk
    assert with_token(secret).delete(f"{URL}{token_id}/").status_code == 204
    assert works(secret) == 401
    revoked = AuditRecord.objects.get(action="token.revoke")
    assert (revoked.actor_username, revoked.object_id) == ("alice", str(token_id))


@pytest.mark.django_db
def test_a_user_can_neither_see_nor_revoke_another_users_token() -> None:
    alice, bob = make_user("alice", "operator"), make_user("bob", "viewer")
    _, alice_secret = ApiToken.objects.create(user=alice)
    bob_token, bob_secret = ApiToken.objects.create(user=bob)
    client = with_token(alice_secret)
    assert [item["user"] for item in client.get(URL).json()] == ["alice"]
    assert client.get(f"{URL}{bob_token.pk}/").status_code == 404
    assert client.delete(f"{URL}{bob_token.pk}/").status_code == 404
    assert works(bob_secret) == 200
    assert not AuditRecord.objects.filter(action="token.revoke").exists()


@pytest.mark.django_db
def test_an_admin_sees_and_revokes_anyones_token() -> None:
    admin, bob = make_user("root", "admin"), make_user("bob", "viewer")
    bob_token, bob_secret = ApiToken.objects.create(user=bob)
    client = logged_in(admin)
    assert [item["user"] for item in client.get(f"{URL}?user=bob").json()] == ["bob"]
    assert client.delete(f"{URL}{bob_token.pk}/").status_code == 204
    assert works(bob_secret) == 401
    revoked = AuditRecord.objects.get(action="token.revoke")
    assert revoked.actor_username == "root"
    assert revoked.before is not None and revoked.before["user"] == "bob"


@pytest.mark.django_db
def test_an_admin_revokes_a_token_in_the_django_admin(admin_user: User) -> None:
    bob = make_user("bob", "viewer")
    bob_token, bob_secret = ApiToken.objects.create(user=bob)
    client = Client()
    client.force_login(admin_user)
    listing = client.get("/admin/accounts/apitoken/")
    assert listing.status_code == 200
    assert bob_secret not in listing.content.decode() and bob_token.digest not in listing.content.decode()
    response = client.post(f"/admin/accounts/apitoken/{bob_token.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert works(bob_secret) == 401
    assert AuditRecord.objects.get(action="token.revoke").actor_username == admin_user.username


@pytest.mark.django_db
def test_roles_hold_with_token_authentication() -> None:
    _, viewer = ApiToken.objects.create(user=make_user("v", "viewer"))
    _, admin = ApiToken.objects.create(user=make_user("a", "admin"))
    _, nobody = ApiToken.objects.create(user=make_user("n", None))
    cluster = {"alias": "west", "bootstrap_servers": "h:1"}
    assert with_token(nobody).get("/api/v1/clusters/").status_code == 403
    assert with_token(viewer).post("/api/v1/clusters/", cluster, format="json").status_code == 403
    assert with_token(admin).post("/api/v1/clusters/", cluster, format="json").status_code == 201


@pytest.mark.django_db
def test_creating_and_revoking_are_audited_without_the_secret() -> None:
    alice = make_user("alice", "viewer")
    client = logged_in(alice)
    created = client.post(URL, {"name": "ci"}, format="json").json()
    client.delete(f"{URL}{created['id']}/")
    records = list(AuditRecord.objects.filter(action__startswith="token.").order_by("id"))
    assert [(r.action, r.actor_username, r.object_id) for r in records] == [
        ("token.create", "alice", str(created["id"])),
        ("token.revoke", "alice", str(created["id"])),
    ]
    assert records[0].after is not None and records[0].after["prefix"] == created["prefix"]
    assert created["token"] not in str([(r.object_repr, r.before, r.after) for r in records])


@pytest.mark.django_db
def test_anonymous_requests_without_a_token_keep_their_403() -> None:
    assert APIClient().get(URL).status_code == 403
    assert APIClient().post(URL, {}, format="json").status_code == 403
    assert with_token("mp_not-a-token").get(URL).status_code == 401
