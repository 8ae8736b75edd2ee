"""Logins, failed logins and lockouts each write an audit record: who (or which name was tried), from where; never
the password. Whoever reads the audit log sees them."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.test import APIClient

from controlplane.audit.models import AuditRecord
from tests.controlplane.api.base import make_user

PASSWORD = "correct-horse-battery"


def attempt(client: Client, username: str, password: str, url: str = "/login/") -> int:
    return client.post(url, {"username": username, "password": password, "next": "/"}).status_code


def audited(action: str) -> list[tuple[str, int | None, str, object]]:
    records = AuditRecord.objects.filter(action=action).order_by("id")
    return [(r.actor_username, r.actor_id, r.object_id, r.after) for r in records]


def everything_audited() -> str:
    return json.dumps(list(AuditRecord.objects.values()), default=str)


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/login/", "/admin/login/"])
def test_a_login_is_audited_with_the_user_and_address(client: Client, url: str) -> None:
    ada = User.objects.create_superuser("ada", password=PASSWORD)
    assert attempt(client, "ada", PASSWORD, url) == 302
    assert audited("auth.login") == [("ada", ada.pk, str(ada.pk), {"remote_addr": "127.0.0.1"})]
    assert PASSWORD not in everything_audited()


@pytest.mark.django_db
def test_a_failed_login_is_audited_with_the_name_tried_and_never_the_password(client: Client) -> None:
    User.objects.create_user("ada", password=PASSWORD)
    assert attempt(client, "ada", "wrong-guess-42") == 200
    assert attempt(client, "nobody-here", "other-guess-43") == 200
    assert audited("auth.login_failed") == [
        ("ada", None, "", {"remote_addr": "127.0.0.1"}),
        ("nobody-here", None, "", {"remote_addr": "127.0.0.1"}),
    ]
    assert not AuditRecord.objects.filter(action="auth.login").exists()
    stored = everything_audited()
    assert "wrong-guess-42" not in stored and "other-guess-43" not in stored


@pytest.mark.django_db
def test_a_lockout_is_audited_once_the_limit_is_reached(client: Client) -> None:
    User.objects.create_user("ada", password=PASSWORD)
    for n in range(9):
        attempt(client, "ada", f"guess-{n}")
    assert not AuditRecord.objects.filter(action="auth.lockout").exists()

    assert attempt(client, "ada", "guess-9") == 429

    assert audited("auth.lockout") == [("ada", None, "", {"remote_addr": "127.0.0.1"})]
    assert len(audited("auth.login_failed")) == 10
    assert "guess-" not in everything_audited()


@pytest.mark.django_db
def test_a_viewer_reads_the_login_records_in_the_audit_log(client: Client) -> None:
    User.objects.create_user("ada", password=PASSWORD)
    attempt(client, "ada", "wrong-guess-42")
    attempt(client, "ada", PASSWORD)
    reader = APIClient()
    reader.force_login(make_user("reader", "viewer"))  # itself a login: the newest record
    results = reader.get("/api/v1/audit/").json()["results"]
    assert [(r["action"], r["actor"]) for r in results] == [
        ("auth.login", "reader"),
        ("auth.login", "ada"),
        ("auth.login_failed", "ada"),
    ]
    assert results[2]["after"] == {"remote_addr": "127.0.0.1"}
