"""LDAP login against a real slapd: the password is checked by the server, and the user's LDAP groups set their role
at each login."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from controlplane.audit.models import AuditRecord
from controlplane.core.permissions import ADMIN, OPERATOR, VIEWER, role_of
from tests.support import slapd

LDAP_PORT_OFFSET = 60  # within this worker's stride, clear of the test clusters' ports
PASSWORDS = {"carol": "carol-ldap-pass-1", "dave": "dave-ldap-pass-2", "erin": "erin-ldap-pass-3"}


@pytest.fixture(scope="module")
def directory() -> Iterator[slapd.Slapd]:
    with slapd.running(
        LDAP_PORT_OFFSET, PASSWORDS, {"kafka-admins": ["carol"], "kafka-ops": ["dave"], "staff": ["erin"]}
    ) as server:
        yield server


@pytest.fixture
def ldap_login(directory: slapd.Slapd, settings: Any) -> slapd.Slapd:
    slapd.log_in_through(settings, directory)
    return directory


def log_in(client: Client, username: str, password: str) -> int:
    return client.post("/login/", {"username": username, "password": password, "next": "/"}).status_code


@pytest.mark.django_db
def test_the_right_ldap_password_logs_in_with_the_role_of_the_users_group(ldap_login: slapd.Slapd) -> None:
    client = Client()
    assert log_in(client, "carol", PASSWORDS["carol"]) == 302
    carol = User.objects.get(username="carol")
    assert role_of(carol) == ADMIN
    assert (carol.email, carol.has_usable_password()) == ("carol@example.org", False)
    assert client.get("/api/v1/clusters/").status_code == 200
    changed = AuditRecord.objects.get(action="auth.roles")
    assert (changed.actor_username, changed.before, changed.after) == (
        "carol",
        {"roles": []},
        {"roles": [ADMIN], "by": "ldap"},
    )


@pytest.mark.django_db
def test_a_wrong_ldap_password_is_refused(ldap_login: slapd.Slapd) -> None:
    client = Client()
    assert log_in(client, "carol", "not-carols-password") == 200
    assert log_in(client, "nobody", "whatever-it-is") == 200
    assert client.get("/api/v1/clusters/").status_code == 403
    assert not User.objects.filter(username__in=["carol", "nobody"]).exists()


@pytest.mark.django_db
def test_a_group_change_changes_the_role_at_the_next_login(ldap_login: slapd.Slapd) -> None:
    assert log_in(Client(), "dave", PASSWORDS["dave"]) == 302
    assert role_of(User.objects.get(username="dave")) == OPERATOR
    ldap_login.set_members("kafka-ops", [])
    ldap_login.set_members("kafka-admins", ["carol", "dave"])
    try:
        assert log_in(Client(), "dave", PASSWORDS["dave"]) == 302
        assert role_of(User.objects.get(username="dave")) == ADMIN
        ldap_login.set_members("kafka-admins", ["carol"])
        # In no mapped group: refused, and the role held is taken away, so an open session loses it too.
        assert log_in(Client(), "dave", PASSWORDS["dave"]) == 200
        assert role_of(User.objects.get(username="dave")) is None
    finally:
        ldap_login.set_members("kafka-ops", ["dave"])
        ldap_login.set_members("kafka-admins", ["carol"])


@pytest.mark.django_db
def test_a_user_in_no_mapped_group_is_refused(ldap_login: slapd.Slapd) -> None:
    client = Client()
    assert log_in(client, "erin", PASSWORDS["erin"]) == 200
    assert client.get("/api/v1/clusters/").status_code == 403
    assert role_of(User.objects.get(username="erin")) is None


@pytest.mark.django_db
def test_an_ldap_login_never_takes_over_a_local_account(ldap_login: slapd.Slapd) -> None:
    local = User.objects.create_user("carol", password="local-carol-pass-9")
    assert log_in(Client(), "carol", PASSWORDS["carol"]) == 200
    assert role_of(local) is None
    assert log_in(Client(), "carol", "local-carol-pass-9") == 302  # the local password still works, locally


@pytest.mark.django_db
def test_ldap_groups_set_viewer_too(ldap_login: slapd.Slapd, settings: Any) -> None:
    settings.MIRRORPLANE_LDAP_ROLE_GROUPS = {slapd.group_dn("staff"): VIEWER}
    assert log_in(Client(), "erin", PASSWORDS["erin"]) == 302
    assert role_of(User.objects.get(username="erin")) == VIEWER
