"""``manage.py token``: create prints a token once, list shows none, revoke deletes a user's tokens."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone
from rest_framework.test import APIClient

from controlplane.accounts.models import ApiToken
from controlplane.audit.models import AuditRecord
from tests.controlplane.api.base import make_user


def run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("token", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def works(secret: str) -> int:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {secret}")
    return client.get("/api/v1/clusters/").status_code


@pytest.mark.django_db
def test_create_prints_the_token_alone_and_it_works_for_the_hours_given() -> None:
    make_user("alice", "viewer")
    out, err = run("create", "alice", "--expiry-hours", "2", "--name", "ci")
    secret = out.strip()
    assert secret.startswith("mp_") and len(secret) == 67
    assert "not shown again" in err and secret not in err
    assert works(secret) == 200
    token = ApiToken.objects.get()
    assert token.name == "ci" and token.expiry is not None
    assert abs(token.expiry - (timezone.now() + timedelta(hours=2))) < timedelta(minutes=1)
    record = AuditRecord.objects.get(action="token.create")
    assert secret not in str((record.object_repr, record.after))


@pytest.mark.django_db
def test_list_shows_prefixes_not_secrets() -> None:
    make_user("alice", "viewer")
    secret = run("create", "alice")[0].strip()
    out, _ = run("list", "alice")
    assert secret[:11] in out and secret not in out


@pytest.mark.django_db
def test_revoke_deletes_every_token_of_the_user_and_no_other() -> None:
    make_user("alice", "viewer")
    make_user("bob", "viewer")
    alice_secrets = [run("create", "alice")[0].strip() for _ in range(2)]
    bob_secret = run("create", "bob")[0].strip()
    out, _ = run("revoke", "alice")
    assert out.strip() == "Revoked 2 tokens of alice."
    assert [works(secret) for secret in alice_secrets] == [401, 401]
    assert works(bob_secret) == 200
    assert AuditRecord.objects.filter(action="token.revoke").count() == 2


@pytest.mark.django_db
def test_revoke_one_token_by_id() -> None:
    make_user("alice", "viewer")
    keep, drop = (run("create", "alice")[0].strip() for _ in range(2))
    dropped = ApiToken.objects.order_by("id").last()
    assert dropped is not None
    run("revoke", "alice", "--id", str(dropped.pk))
    assert (works(keep), works(drop)) == (200, 401)
    with pytest.raises(CommandError, match="--id"):
        run("revoke", "alice", "--id", str(dropped.pk))


@pytest.mark.django_db
@pytest.mark.parametrize("args", [("create", "ghost"), ("create", "alice", "--name", "n" * 101)])
def test_an_unknown_user_or_an_overlong_name_is_refused(args: tuple[str, ...]) -> None:
    make_user("alice", "viewer")
    with pytest.raises(CommandError):
        run(*args)
    assert not ApiToken.objects.exists()
